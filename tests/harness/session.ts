// A real Pi session with this package loaded, for end-to-end tests.
//
// Real: the AgentSession, the session manager, the tools (bash, read, grep …)
// on a real folder, extension loading through Pi's resource loader. Stand-ins:
// the main model (Pi's faux provider, scripted turn by turn) and the classifier
// (provider `fakejev`, model `jev-test`, whose behaviour the test chooses).
// Every provider request and every classifier call is recorded.
import { type Behaviour, type ClassifyRequest, keepEverything, registerStandInClassifier } from "./classifier.ts";
import { agent, ai, type Loose, piVersion, repoRoot } from "./pi.ts";
import { makeWorkspace } from "./workspace.ts";

/** A tool call the scripted model makes. */
export type Call = { tool: string; args: Record<string, unknown>; id?: string };
/** A turn with text before its tool calls (the text is a note of the run). */
export type Said = { say: string; calls: Call[] };
/**
 * One scripted model turn: a text answer, one or more tool calls, text with
 * calls, or a function of the request that returns one of those (or a whole
 * faux assistant message).
 */
export type Step = string | Call | Call[] | Said | ((request: ProviderRequest) => string | Call | Call[] | Said | Loose);

/** What one request to the main model carried. */
export interface ProviderRequest {
  systemPrompt: string | undefined;
  messages: Loose[];
  tools: { name: string }[];
}

export interface ClassifierCall {
  model: string;
  request: ClassifyRequest;
  timeoutMs: number | undefined;
  startedAt: number;
  endedAt: number | undefined;
  outcome: "answered" | "error" | "pending";
}

export interface SessionOptions {
  /** Files of the fixture folder, by relative path. */
  files?: Record<string, string>;
  /** The main model's turns, in order. Later turns can be added with `script()`. */
  script?: Step[];
  /** The stand-in classifier. Default: keeps everything. */
  classifier?: Behaviour;
  /** The guard's settings file, as an object or as raw text. Default: the stand-in classifier as `model`. */
  guardSettings?: Record<string, unknown> | string;
  /** Load this package (default true). */
  loadProduct?: boolean;
  /** The extension mode the session reports to extensions (default "print"). */
  mode?: "print" | "rpc" | "json" | "tui";
  /** More inline extensions, loaded after the harness's own and before this package. */
  extensions?: ((pi: Loose) => void)[];
  /** Pi settings for the temporary agent dir (settings.json). */
  piSettings?: Record<string, unknown>;
  /** The main model's context window (default 200,000). */
  contextWindow?: number;
  /** The stand-in classifier's `contextWindow` in tokens (default 262,144). */
  classifierContextWindow?: number;
  /** Persist the session as Pi does, as a JSONL file in this folder (default: in memory, no file). */
  sessionDir?: string;
  /** Runs on the agent dir before Pi starts (to write models.json, say). */
  beforeStart?: (agentDir: string) => void;
  /**
   * The UI context to bind, made from the recording one (to make a method throw or go missing, as some
   * hosts' contexts do). Default: the recording one as it is.
   */
  ui?: (recording: Loose) => Loose;
}

export interface PiSession {
  session: Loose;
  cwd: string;
  agentDir: string;
  /** Requests to the main model, oldest first. */
  requests: ProviderRequest[];
  /** Calls to the stand-in classifier, oldest first. */
  classifierCalls: ClassifierCall[];
  /** Most classifier calls in flight at once. */
  maxClassifierInFlight: () => number;
  /** Notifications shown through ctx.ui.notify. */
  notifications: { message: string; type: string | undefined }[];
  /** Every status text set through ctx.ui.setStatus, by key, oldest first. */
  statuses: Map<string, (string | undefined)[]>;
  /** The current status text of a key. */
  status: (key: string) => string | undefined;
  /** Sends a prompt (or a /command) and waits until the run settles. */
  prompt: (text: string, options?: Loose) => Promise<void>;
  /** Adds turns to the main model's script. */
  script: (...steps: Step[]) => void;
  /** Turns left unused in the script. */
  pendingSteps: () => number;
  /** Replaces the classifier's behaviour. */
  setClassifier: (behaviour: Behaviour) => void;
  /** The session's entries on the active branch. */
  branch: () => Loose[];
  /** Pi's projection of the active branch. */
  projection: () => Loose;
  dispose: () => Promise<void>;
}

/** Starts a real Pi session in a temporary folder and agent dir. */
export async function startSession(options: SessionOptions = {}): Promise<PiSession> {
  const workspace = makeWorkspace("session", { ...options, piSettings: options.piSettings ?? {} });
  const { cwd, agentDir } = workspace;
  options.beforeStart?.(agentDir);
  // The package reads its settings from Pi's agent dir; point both at the temporary one.
  process.env.PI_CODING_AGENT_DIR = agentDir;
  delete process.env.PI_CONTEXT_GUARD_CONFIG;

  const requests: ProviderRequest[] = [];
  const steps: Step[] = [...(options.script ?? [])];
  let callCount = 0;
  const nextTurn = (context: Loose) => {
    const request: ProviderRequest = {
      systemPrompt: context.systemPrompt,
      messages: structuredClone(context.messages ?? []),
      tools: (context.tools ?? []).map((t: Loose) => ({ name: t.name })),
    };
    requests.push(request);
    const next = steps.shift();
    const step = typeof next === "function" ? next(request) : next;
    if (step === undefined) return ai.fauxAssistantMessage("(faux) done");
    if (typeof step === "string") return ai.fauxAssistantMessage(step);
    if (step.role === "assistant") return step;
    const said = "say" in step ? (step as Said) : undefined;
    const calls = (said ? said.calls : Array.isArray(step) ? step : [step]) as Call[];
    const blocks = calls.map((c) => ai.fauxToolCall(c.tool, c.args, { id: c.id ?? `call_${++callCount}` }));
    return ai.fauxAssistantMessage(said ? [ai.fauxText(said.say), ...blocks] : blocks, { stopReason: "toolUse" });
  };
  const faux = ai.fauxProvider({
    provider: "faux",
    models: [{ id: "faux-1", input: ["text", "image"], contextWindow: options.contextWindow ?? 200_000, maxTokens: 8_000 }],
  });
  faux.setResponses(Array.from({ length: 2_000 }, () => nextTurn));

  let behaviour = options.classifier ?? keepEverything;
  const classifierCalls: ClassifierCall[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const classify = async (model: Loose, context: Loose, callOptions: Loose) => {
    const call: ClassifierCall = {
      model: `${model.provider}/${model.id}`,
      request: structuredClone({ state: context.state, questions: context.questions, images: context.images }),
      timeoutMs: callOptions?.timeoutMs,
      startedAt: Date.now(),
      endedAt: undefined,
      outcome: "pending",
    };
    classifierCalls.push(call);
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    try {
      const result = await behaviour(call.request, callOptions?.signal);
      call.outcome = result.stopReason === "stop" ? "answered" : "error";
      return { provider: model.provider, model: model.id, ...result };
    } catch (error) {
      call.outcome = "error";
      throw error;
    } finally {
      call.endedAt = Date.now();
      inFlight--;
    }
  };

  const harnessExtension = (pi: Loose) => {
    pi.registerProvider(faux.provider);
    registerStandInClassifier(pi, classify, options.classifierContextWindow);
  };

  const loader = new agent.DefaultResourceLoader({
    cwd,
    agentDir,
    additionalExtensionPaths: options.loadProduct === false ? [] : [repoRoot],
    extensionFactories: [harnessExtension, ...(options.extensions ?? [])],
  });
  await loader.reload();
  const loadErrors = loader.getExtensions().errors ?? [];
  if (loadErrors.length) throw new Error(`extension load failed on Pi ${piVersion}: ${JSON.stringify(loadErrors)}`);

  const { session } = await agent.createAgentSession({
    cwd,
    agentDir,
    resourceLoader: loader,
    sessionManager: options.sessionDir ? agent.SessionManager.create(cwd, options.sessionDir) : agent.SessionManager.inMemory(cwd),
    model: faux.getModel(),
  });

  const notifications: PiSession["notifications"] = [];
  const statuses = new Map<string, (string | undefined)[]>();
  const recording = recordingUi(notifications, statuses);
  const uiContext = options.ui ? options.ui(recording) : recording;
  await session.bindExtensions({
    uiContext,
    mode: options.mode ?? "print",
    onError: (e: Loose) => notifications.push({ message: `extension error: ${e?.error ?? e}`, type: "error" }),
  });

  return {
    session,
    cwd,
    agentDir,
    requests,
    classifierCalls,
    maxClassifierInFlight: () => maxInFlight,
    notifications,
    statuses,
    status: (key) => statuses.get(key)?.at(-1),
    prompt: async (text, promptOptions) => {
      await session.prompt(text, promptOptions);
      await session.agent?.waitForIdle?.();
    },
    script: (...more) => steps.push(...more),
    pendingSteps: () => steps.length,
    setClassifier: (next) => {
      behaviour = next;
    },
    branch: () => session.sessionManager.getBranch(),
    projection: () => session.sessionManager.buildSessionProjection(),
    dispose: async () => {
      session.dispose();
      workspace.remove();
    },
  };
}

/** A UI context that records what the extension shows; dialogs answer with their defaults. */
function recordingUi(notifications: PiSession["notifications"], statuses: PiSession["statuses"]): Loose {
  const theme = new Proxy(
    {},
    {
      get:
        () =>
        (...args: unknown[]) =>
          String(args.at(-1) ?? ""),
    },
  );
  return {
    select: async () => undefined,
    confirm: async () => false,
    input: async () => undefined,
    notify: (message: string, type?: string) => notifications.push({ message, type }),
    onTerminalInput: () => () => {},
    setStatus: (key: string, text: string | undefined) => {
      const list = statuses.get(key) ?? [];
      list.push(text);
      statuses.set(key, list);
    },
    setWorkingMessage: () => {},
    setWorkingVisible: () => {},
    setWorkingIndicator: () => {},
    setHiddenThinkingLabel: () => {},
    setWidget: () => {},
    setFooter: () => {},
    setHeader: () => {},
    setTitle: () => {},
    custom: async () => undefined,
    pasteToEditor: () => {},
    setEditorText: () => {},
    getEditorText: () => "",
    editor: async () => undefined,
    addAutocompleteProvider: () => {},
    setEditorComponent: () => {},
    getEditorComponent: () => undefined,
    theme,
    getAllThemes: () => [],
    getTheme: () => undefined,
    setTheme: () => ({ success: false, error: "not in tests" }),
    getToolsExpanded: () => false,
    setToolsExpanded: () => {},
  };
}
