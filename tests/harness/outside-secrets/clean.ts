// Clean (secret-free) texts of kinds a secret redactor tends to misfire on: hashes,
// ids, integrity digests, key-named fields with ordinary values. Each is >= 150 KB.
// Nothing here is a credential; see README.md.
import { rng, uuid, b64, iso, HEX, L, D, WORDS } from './corpus.ts';
import type { Rng } from './corpus.ts';

const MIN = 150_000;
const NOUNS = ['invoice', 'customer', 'shipment', 'product', 'coupon', 'report', 'avatar', 'thumbnail', 'backup', 'export', 'session', 'profile', 'review', 'banner', 'receipt'];
const PKGS = ['react', 'lodash', 'express', 'debug', 'ms', 'chalk', 'semver', 'glob', 'minimatch', 'yargs', 'commander', 'uuid', 'axios', 'zod', 'vite', 'esbuild', 'rollup', 'typescript', 'eslint', 'prettier', 'jest', 'vitest', 'tslib', 'picocolors', 'nanoid', 'postcss', 'autoprefixer', 'dotenv', 'ws', 'undici'];
const DEBS = ['libc6', 'libssl3', 'zlib1g', 'libgcc-s1', 'libstdc++6', 'libzstd1', 'liblzma5', 'libbz2-1.0', 'libpcre2-8-0', 'libselinux1', 'libcap2', 'libsystemd0', 'libudev1', 'libcurl4', 'libnghttp2-14', 'libidn2-0', 'libpsl5', 'libbrotli1', 'libsqlite3-0', 'libexpat1', 'libffi8', 'libgnutls30', 'libtasn1-6', 'libp11-kit0', 'libgmp10', 'libnettle8', 'libhogweed6', 'libkeyutils1', 'libkrb5-3', 'libgssapi-krb5-2'];
const ver = (r: Rng): string => `${r.int(0, 12)}.${r.int(0, 30)}.${r.int(0, 20)}`;
const until = (r: Rng, first: string, gen: (i: number) => string, last = ''): string => {
  const parts = [first]; let n = first.length; let i = 0;
  while (n < MIN + r.int(0, 20000)) { const p = gen(i++); parts.push(p); n += p.length; }
  parts.push(last); return parts.join('');
};
const path = (r: Rng): string => `${r.pick(['data', 'uploads', 'exports', 'logs', 'public', 'archive'])}/${r.int(2019, 2024)}/${String(r.int(1, 12)).padStart(2, '0')}/${r.pick(NOUNS)}-${r.int(1, 99999)}.${r.pick(['json', 'csv', 'parquet', 'png', 'pdf', 'gz'])}`;

function s3Json(r: Rng): string {
  const owner = r.s(HEX, 64);
  return until(r, '{\n    "Contents": [\n', (i) => `${i ? ',\n' : ''}        {\n            "Key": "${path(r)}",\n            "LastModified": "${iso(r).slice(0, 19)}+00:00",\n            "ETag": "\\"${r.s(HEX, 32)}${r.chance(0.15) ? '-' + r.int(2, 40) : ''}\\"",\n            "ChecksumAlgorithm": [\n                "CRC32"\n            ],\n            "Size": ${r.int(0, 90000000)},\n            "StorageClass": "${r.pick(['STANDARD', 'STANDARD', 'STANDARD_IA', 'GLACIER'])}",\n            "Owner": {\n                "DisplayName": "platform-team",\n                "ID": "${owner}"\n            }\n        }`, `\n    ],\n    "RequestCharged": null,\n    "Prefix": ""\n}\n`);
}
function s3Ls(r: Rng): string {
  return until(r, '', () => (r.chance(0.08) ? `                           PRE ${r.pick(NOUNS)}s-${r.int(1, 300)}/\n` : `${iso(r).slice(0, 10)} ${iso(r).slice(11, 19)} ${String(r.int(0, 900000000)).padStart(10)} ${path(r)}\n`));
}
const PHRASES: [string, string, string, string, string][] = [
  ['Password', 'Passwort', 'Mot de passe', 'パスワード', 'Contraseña'], ['Forgot your password?', 'Passwort vergessen?', 'Mot de passe oublié ?', 'パスワードをお忘れですか？', '¿Olvidaste tu contraseña?'],
  ['API key', 'API-Schlüssel', 'Clé API', 'APIキー', 'Clave de API'], ['Your API key is shown only once', 'Ihr API-Schlüssel wird nur einmal angezeigt', 'Votre clé API n’est affichée qu’une fois', 'APIキーは一度だけ表示されます', 'Tu clave de API solo se muestra una vez'],
  ['Access token', 'Zugriffstoken', 'Jeton d’accès', 'アクセストークン', 'Token de acceso'], ['Token expired, please sign in again', 'Token abgelaufen, bitte erneut anmelden', 'Jeton expiré, veuillez vous reconnecter', 'トークンの有効期限が切れました', 'El token caducó, inicia sesión de nuevo'],
  ['Secret name', 'Name des Geheimnisses', 'Nom du secret', 'シークレット名', 'Nombre del secreto'], ['Save changes', 'Änderungen speichern', 'Enregistrer', '変更を保存', 'Guardar cambios'],
  ['Private key file', 'Datei mit privatem Schlüssel', 'Fichier de clé privée', '秘密鍵ファイル', 'Archivo de clave privada'], ['Sign in', 'Anmelden', 'Se connecter', 'サインイン', 'Iniciar sesión'],
  ['Next page', 'Nächste Seite', 'Page suivante', '次のページ', 'Página siguiente'], ['Show password', 'Passwort anzeigen', 'Afficher le mot de passe', 'パスワードを表示', 'Mostrar contraseña'],
];
function i18n(r: Rng): string {
  const scopes = ['auth', 'settings', 'billing', 'checkout', 'profile', 'admin', 'apiKeys', 'tokens', 'secrets', 'onboarding'];
  const fields = ['password', 'apiKey', 'token', 'secretName', 'privateKey', 'label', 'help', 'placeholder', 'error', 'title', 'confirm', 'key'];
  return until(r, '{\n  "locale": "multi",\n  "version": 7,\n  "messages": [\n', (i) => {
    const p = r.pick(PHRASES); const k = `${r.pick(scopes)}.${r.pick(fields)}.${r.pick(fields)}${r.int(1, 400)}`;
    return `${i ? ',\n' : ''}    {\n      "key": "${k}",\n      "en": "${p[0]}",\n      "de": "${p[1]}",\n      "fr": "${p[2]}",\n      "ja": "${p[3]}",\n      "es": "${p[4]}",\n      "description": "Shown on the ${r.pick(scopes)} screen",\n      "password": "${(PHRASES[0] as string[])[r.int(0, 4)]}",\n      "token": "${r.pick(['Token', 'Jeton', 'トークン'])}"\n    }`;
  }, '\n  ]\n}\n');
}
function nginx(r: Rng): string {
  const q = (): string => r.pick([`key=${r.pick(['homepage', 'nav.menu', 'summer-sale', 'sku-' + r.int(100, 99999), 'checkout.title'])}&page=${r.int(1, 40)}`, `token=${r.pick(['guest', 'none', 'refresh', 'expired', 'preview'])}&page=${r.int(1, 9)}`, `page=${r.int(1, 200)}&per_page=${r.pick([20, 50, 100])}&sort=-created_at`, `q=${r.pick(NOUNS)}+${r.pick(WORDS)}&page=${r.int(1, 12)}`, `key=${r.pick(['en', 'de', 'fr'])}&lang=${r.pick(['en', 'de'])}`, `order_id=${uuid(r)}&page=1`]);
  return until(r, '', () => `${r.int(1, 223)}.${r.int(0, 255)}.${r.int(0, 255)}.${r.int(1, 254)} - - [${String(r.int(1, 28)).padStart(2, '0')}/${r.pick(['Apr', 'May', 'Jun'])}/2024:${String(r.int(0, 23)).padStart(2, '0')}:${String(r.int(0, 59)).padStart(2, '0')}:${String(r.int(0, 59)).padStart(2, '0')} +0000] "${r.pick(['GET', 'GET', 'POST', 'HEAD'])} /${r.pick(['api/v1/', 'shop/', 'docs/', ''])}${r.pick(NOUNS)}s${r.chance(0.2) ? '/' + uuid(r) : ''}?${q()} HTTP/1.1" ${r.pick([200, 200, 200, 301, 304, 404, 500])} ${r.int(0, 60000)} "${r.pick(['-', 'https://shop.example.net/', 'https://www.google.com/'])}" "${r.pick(['Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Safari/537.36', 'curl/8.5.0', 'Googlebot/2.1 (+http://www.google.com/bot.html)'])}" rt=${r.int(0, 2000) / 1000}\n`);
}
function tsSource(r: Rng): string {
  const cap = (s: string): string => s[0]?.toUpperCase() + s.slice(1);
  return until(r, "import type { Token, PasswordInput, PassInput, SecretRef } from './types';\nimport { z } from 'zod';\n\n", () => {
    const n = cap(r.pick(NOUNS)) + cap(r.pick(WORDS));
    return `export interface ${n}Form {\n  username: string;\n  password: PasswordInput;\n  pass: PassInput;\n  token: Token;\n  secretName: string;\n  apiKey?: string;\n  privateKeyPath: string;\n}\n\nexport interface ${n}Options { apiKey: string; token?: Token; baseUrl: string; retries: number }\n\nexport function create${n}Client(options: ${n}Options): ${n}Client {\n  const apiKey = options.apiKey;\n  const token: Token = options.token ?? anonymousToken();\n  return new ${n}Client({ apiKey: options.apiKey, token, baseUrl: options.baseUrl });\n}\n\nexport async function rotate${n}Secret(secretName: string, ref: SecretRef, password: PasswordInput): Promise<void> {\n  if (!secretName) throw new Error('secretName is required');\n  await store.put(secretName, { ref, passwordHash: await hash(password.value) });\n}\n\nexport const ${n.toLowerCase()}Schema = z.object({\n  password: z.string().min(12),\n  token: z.string().optional(),\n  apiKey: z.string().uuid().optional(),\n  page: z.number().int().default(${r.int(1, 5)}),\n});\n\n`;
  });
}
function dpkg(r: Rng): string {
  return until(r, '', () => {
    const p = r.pick(DEBS) + (r.chance(0.5) ? '' : '-' + r.pick(['dev', 'bin', 'common', 'data', 'doc'])); const v = `${ver(r)}-${r.int(1, 9)}ubuntu${r.int(0, 4)}`;
    return `Package: ${p}\nStatus: install ok installed\nPriority: ${r.pick(['optional', 'required', 'important'])}\nSection: ${r.pick(['libs', 'utils', 'admin', 'net', 'devel'])}\nInstalled-Size: ${r.int(10, 9000)}\nMaintainer: Ubuntu Developers <ubuntu-devel-discuss@lists.ubuntu.com>\nArchitecture: ${r.pick(['amd64', 'all'])}\nMulti-Arch: ${r.pick(['same', 'foreign'])}\nSource: ${p.split('-')[0]}\nVersion: ${v}\nReplaces: ${r.pick(DEBS)} (<< ${ver(r)})\nProvides: ${r.pick(DEBS)}-${r.pick(['abi', 'api'])}-${r.int(1, 9)}, ${r.pick(DEBS)} (= ${v})\nDepends: ${Array.from({ length: r.int(1, 6) }, () => `${r.pick(DEBS)} (>= ${ver(r)})`).join(', ')}\nPre-Depends: libc6 (>= 2.34)\nBreaks: ${r.pick(DEBS)} (<< ${ver(r)})\n${r.chance(0.3) ? `Conffiles:\n /etc/${p}/${p}.conf ${r.s(HEX, 32)}\n /etc/default/${p} ${r.s(HEX, 32)}\n` : ''}Description: ${r.pick(['shared library', 'command-line utilities', 'runtime files', 'development files'])} for ${p}\n This package provides the ${r.pick(['runtime', 'headers', 'documentation'])} needed by programs\n that use ${p}. Key features include ${r.pick(['pass-through mode', 'token buckets', 'key rotation helpers', 'secret-free defaults'])}.\nHomepage: https://www.${p.split('-')[0]}.org/\nOriginal-Maintainer: Debian Maintainers <pkg-${p.split('-')[0]}@lists.debian.org>\n\n`;
  });
}
function lock(r: Rng): string {
  const integ = (): string => (r.chance(0.9) ? 'sha512-' + b64(r.bytes(64)) : 'sha1-' + b64(r.bytes(20)));
  return until(r, '{\n  "name": "web-app",\n  "version": "3.2.0",\n  "lockfileVersion": 3,\n  "requires": true,\n  "packages": {\n    "": {\n      "name": "web-app",\n      "version": "3.2.0"\n    }', () => {
    const n = (r.chance(0.3) ? `@${r.pick(['babel', 'types', 'vitest', 'esbuild', 'rollup'])}/` : '') + r.pick(PKGS) + (r.chance(0.4) ? '-' + r.pick(['core', 'utils', 'plugin', 'parser']) : ''); const v = ver(r);
    const deps = Array.from({ length: r.int(0, 4) }, () => `        "${r.pick(PKGS)}": "^${ver(r)}"`).join(',\n');
    return `,\n    "node_modules/${n}": {\n      "version": "${v}",\n      "resolved": "https://registry.npmjs.org/${n}/-/${n.split('/').pop()}-${v}.tgz",\n      "integrity": "${integ()}",\n${r.chance(0.5) ? '      "dev": true,\n' : ''}      "license": "${r.pick(['MIT', 'ISC', 'Apache-2.0', 'BSD-3-Clause'])}",\n${deps ? `      "dependencies": {\n${deps}\n      },\n` : ''}      "engines": {\n        "node": ">=${r.pick([14, 16, 18])}"\n      }\n    }`;
  }, '\n  }\n}\n');
}
function gitLog(r: Rng): string {
  const people = ['Dana Lee <dana@example.net>', 'Sam Ortiz <sam.ortiz@example.org>', 'Kim Park <kpark@example.com>', 'dependabot[bot] <49699333+dependabot[bot]@users.noreply.github.com>'];
  return until(r, '', () => {
    const merge = r.chance(0.15);
    return `commit ${r.s(HEX, 40)}${r.chance(0.1) ? ' (tag: v' + ver(r) + ')' : ''}\n${merge ? `Merge: ${r.s(HEX, 7)} ${r.s(HEX, 7)}\n` : ''}Author: ${r.pick(people)}\nDate:   ${new Date(Date.parse(iso(r))).toUTCString().replace('GMT', '+0000')}\n\n    ${merge ? `Merge pull request #${r.int(100, 9999)} from acme/${r.pick(['fix', 'feat', 'chore'])}/${r.pick(NOUNS)}-${r.pick(WORDS)}` : `${r.pick(['fix', 'feat', 'chore', 'refactor', 'docs'])}(${r.pick(WORDS)}): ${r.pick(['rotate token cache keys', 'handle password reset page', 'bump lodash', 'add api key field to form', 'drop unused secretName prop', 'paginate results'])}`}\n\n    ${r.pick(['Fixes the pagination bug on page 2.', 'Reverts ' + r.s(HEX, 12) + '.', 'Follow-up to ' + r.s(HEX, 7) + '.', 'No functional change.'])}\n\n    Change-Id: I${r.s(HEX, 40)}\n    Signed-off-by: ${r.pick(people)}\n\n`;
  });
}
function uuidCsv(r: Rng): string {
  return until(r, 'id,user_id,order_id,created_at,status,amount_cents,currency,request_id\n', () => `${uuid(r)},${uuid(r)},${uuid(r)},${iso(r)},${r.pick(['paid', 'pending', 'refunded', 'failed'])},${r.int(100, 999999)},${r.pick(['EUR', 'USD', 'GBP', 'JPY'])},${uuid(r)}\n`);
}
function css(r: Rng): string {
  const col = (): string => '#' + r.s(HEX, r.pick([3, 6]));
  return until(r, '@charset "UTF-8";:root{--brand:#1f6feb;--radius:6px}', () => {
    const c = `.${r.pick(NOUNS)}-${r.pick(['card', 'list', 'btn', 'grid', 'nav'])}__${r.pick(['item', 'title', 'icon', 'body'])}${r.chance(0.3) ? '--' + r.pick(['active', 'disabled', 'key', 'token']) : ''}`;
    if (r.chance(0.05)) return `${c}{background-image:url(data:image/svg+xml;base64,${b64(`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><path fill="${col()}" d="M${r.int(1, 9)} ${r.int(1, 9)}h${r.int(2, 8)}v${r.int(2, 8)}H${r.int(1, 9)}z"/></svg>`)})}`;
    return `${c}{color:${col()};background:${col()};border:1px solid rgba(${r.int(0, 255)},${r.int(0, 255)},${r.int(0, 255)},.${r.int(1, 9)});padding:${r.int(0, 24)}px ${r.int(0, 24)}px;border-radius:var(--radius)}${r.chance(0.1) ? `@media (max-width:${r.pick([480, 768, 1024])}px){${c}{display:none}}` : ''}`;
  }, '\n');
}
function minJs(r: Rng): string {
  const id = (): string => r.s(L, 1) + (r.chance(0.5) ? r.s(L + D, 1) : '');
  return until(r, '/*! For license information please see vendor.3f2a9c1b.js.LICENSE.txt */\n(self.webpackChunkweb_app=self.webpackChunkweb_app||[]).push([[' + r.int(100, 999) + '],{', (i) => {
    const a = id(); const b = id();
    return `${i ? ',' : ''}${r.int(1000, 99999)}:function(${a},${b},n){"use strict";n.d(${b},{Z:function(){return ${id()}}});var ${id()}=n(${r.int(100, 9999)}),${id()}=function(e){return{apiKey:e.apiKey,token:e.token||null,page:e.page||1,key:"${r.pick(NOUNS)}:"+e.id}},${id()}=function(e,t){return e.password!==t.password&&e.pass!==t.pass},${id()}="${r.pick(['/api/v1/', '/static/js/', '/locales/'])}${r.pick(NOUNS)}.${r.s(HEX, 8)}.${r.pick(['js', 'json', 'css'])}";function ${id()}(e){for(var t=0,n=e.length;t<n;t++)if(e[t].key===${a})return e[t].value;return void 0}}`;
  }, `}]);\n//# sourceMappingURL=vendor.${r.s(HEX, 8)}.js.map\n`);
}

export function cleanTexts(seed: number): { name: string; text: string }[] {
  const r = rng(seed * 104729 + 3);
  return [
    { name: 's3api-list-objects-v2.json', text: s3Json(r) }, { name: 'aws-s3-ls.txt', text: s3Ls(r) }, { name: 'locales/messages.json', text: i18n(r) },
    { name: 'nginx-access.log', text: nginx(r) }, { name: 'src/forms.ts', text: tsSource(r) }, { name: 'var/lib/dpkg/status', text: dpkg(r) },
    { name: 'package-lock.json', text: lock(r) }, { name: 'git-log.txt', text: gitLog(r) }, { name: 'payments-export.csv', text: uuidCsv(r) },
    { name: 'dist/app.min.css', text: css(r) }, { name: 'dist/vendor.min.js', text: minJs(r) },
  ];
}
