// How a planted secret counts as withheld (issue 25): no 12-character piece
// of it (or of each piece it appears as, when a surrounding splits or encodes
// it) is left in the text that was sent. A piece that the output holds apart
// from the secret (a kubeconfig's certificate shares the first characters of
// every base64 key) is not counted against it.
import type { Planted } from "./corpus.ts";

export const PIECE = 12;

/** Whether any 12-character piece of `p` is in `sent`. */
export function leftPieces(p: Planted, sent: string): boolean {
  for (const piece of p.appearsAs ?? [p.value]) {
    for (let i = 0; i + PIECE <= piece.length; i++) {
      if (sent.includes(piece.slice(i, i + PIECE))) return true;
    }
  }
  return false;
}
