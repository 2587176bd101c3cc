import { parseArgs } from "node:util";
import { resolve } from "node:path";
import { DEFAULT_MAX_BODY_BYTES, startProxy, type ProxyRoute, type ProxyServer } from "../../node/proxy.js";
import { loadProxyConfig } from "../../node/proxy-config.js";
import { isHostNameSyntax, isLoopback } from "../../node/proxy-http.js";
import { supportedProviders } from "../../providers/registry.js";
import { findTarget } from "../../schema/targets/index.js";
import { SCHEMA_TARGETS } from "../../schema/targets/types.js";
import { isProviderName, type ProviderName } from "../../types.js";
import { firstEvent } from "../../node/first-event.js";
import { CliError, EXIT, type CliContext } from "../context.js";
import { textCallsOption } from "../tools-file.js";
import { TEXT_CALL_SYNTAX_NAMES } from "../../text-calls/syntaxes.js";

export const summary = "a local HTTP proxy that repairs requests and streams between any client and a provider";

export const usage = `Usage: toolwire proxy (--upstream URL | --config FILE) [--port N] [--host H --expose --allow-host NAME...]
                      [--provider P] [--target T] [--max-body-size BYTES]
                      [--log-format text|json] [--shutdown-timeout SECONDS] [--withheld-notice]
                      [--no-schemas] [--no-history] [--no-responses] [--no-recovery]
                      [--text-calls auto|S,... [--tools FILE]]

Listens on http://127.0.0.1:<port> and forwards every request to URL + its path, repairing on
the way: tool schemas sanitized for the target, tool_use/tool_result pairing repaired in the
provider's own format, one retry after an error a repair can fix (llama.cpp grammar, Anthropic
orphan tool_use), streamed bodies re-encoded and non-streamed JSON bodies repaired whole (all six
protocols), so the client gets the calls toolwire decodes (cut or invalid calls withheld). Point any SDK's base URL at it:

  Python  Anthropic(base_url="http://127.0.0.1:<port>")   OpenAI(base_url="http://127.0.0.1:<port>/v1")
  Go      option.WithBaseURL("http://127.0.0.1:<port>/v1/")

Headers (keys included) pass through untouched and are never logged. One line per request goes
to stderr with the repair codes and the request id; responses carry them in x-toolwire-repairs
(header: request side and non-streamed responses; trailer: everything) and x-request-id (the
client's own, or a fresh one). GET /healthz answers 200 (503 while draining); GET /metrics
answers Prometheus text (see docs/proxy.md).

  --upstream URL  the provider's base URL, e.g. https://api.anthropic.com (with --config: the
                  upstream of every path no route of the file takes)
  --config FILE   JSON routes by path prefix, several upstreams from one process:
                  {"routes": [{"prefix": "/anthropic", "upstream": "https://api.anthropic.com"},
                              {"prefix": "/vllm", "upstream": "http://127.0.0.1:8000",
                               "provider": "openai-chat", "repairs": {"schemas": false},
                               "textCalls": "auto", "tools": "tools.json"}]}
                  (route keys: prefix, upstream, name, stripPrefix, provider, target, repairs,
                  textCalls, tools)
  --port N        port to listen on (default: a free one, printed at start)
  --host H        interface to bind (default 127.0.0.1); off loopback it needs --expose and
                  at least one --allow-host, and prints a warning
  --expose        allow --host to be an address off loopback (anyone who reaches it uses the
                  keys its clients send)
  --allow-host NAME  a Host name the proxy answers besides localhost/127.0.0.1/::1 (repeatable);
                  any other Host gets 403 (DNS rebinding)
  --max-body-size BYTES  largest request body the proxy reads to repair (default ${DEFAULT_MAX_BODY_BYTES},
                  32 MiB; suffixes k, m: 64m); larger ones get 413. Bodies of other paths stream.
  --provider P    protocol of every request (${supportedProviders().join(", ")}); default: from each path
  --target T      schema target (${SCHEMA_TARGETS.join(", ")}); default: from the upstream host
  --log-format F  text (default: one line per request) or json (one object per line: request_id,
                  method, path, route, provider, status, outcome, duration_ms, ttfb_ms, repairs, withheld)
  --shutdown-timeout S  on SIGTERM/SIGINT stop accepting and let open requests finish for up to
                  S seconds (default 30), then close them; a second signal closes them at once
  --withheld-notice  when a call is withheld (cut or invalid), add a text part to the assistant
                  message naming it and why, which the model reads on its next turn (every
                  protocol, streamed and whole; see docs/proxy.md)
  --no-schemas, --no-history, --no-responses, --no-recovery   turn one kind of repair off
  --text-calls X  for an upstream started without a tool-call parser (vLLM, SGLang, llama.cpp,
                  Ollama): read the calls the model writes into its text and send them to the
                  client as real tool_calls (Chat Completions, streamed or not; Ollama /api/chat
                  streamed): auto, or syntax names
                  separated by commas (${TEXT_CALL_SYNTAX_NAMES.join(", ")}); with --config, the
                  --upstream route's only (routes set their own textCalls)
  --tools FILE    with --text-calls: the tools the model is offered (a JSON list of tool
                  definitions, or a request body with "tools"): only their names become calls,
                  and their schemas type XML and pythonic values; a request's own "tools" take
                  their place for its response

Runs until interrupted (Ctrl-C). Exit codes: 0 stopped (SIGTERM/SIGINT, after draining); 2 usage error; 3 cannot listen, or --config
unreadable or invalid.`;

interface ProxyArgs {
  upstream: string | undefined;
  config: string | undefined;
  port: number;
  host: string;
  allowHosts: string[];
  maxBodyBytes: number;
  logFormat: "text" | "json";
  shutdownMs: number;
  withheldNotice: boolean;
  provider: ProviderName | undefined;
  target: string | undefined;
  repairs: { schemas: boolean; history: boolean; responses: boolean; recovery: boolean };
  textCalls: string | undefined;
  tools: string | undefined;
}

function parse(args: string[]): ProxyArgs {
  let parsed;
  try {
    parsed = parseArgs({
      args,
      options: {
        upstream: { type: "string" },
        config: { type: "string" },
        port: { type: "string" },
        host: { type: "string" },
        expose: { type: "boolean" },
        "allow-host": { type: "string", multiple: true },
        "max-body-size": { type: "string" },
        "log-format": { type: "string" },
        "shutdown-timeout": { type: "string" },
        "withheld-notice": { type: "boolean" },
        provider: { type: "string" },
        target: { type: "string" },
        "no-schemas": { type: "boolean" },
        "no-history": { type: "boolean" },
        "no-responses": { type: "boolean" },
        "no-recovery": { type: "boolean" },
        "text-calls": { type: "string" },
        tools: { type: "string" },
      },
    });
  } catch (error) {
    throw new CliError(`${(error as Error).message}\n\n${usage}`, EXIT.usage);
  }
  const { values } = parsed;
  if (!values.upstream && !values.config) throw new CliError(`--upstream is required (or --config FILE).\n\n${usage}`, EXIT.usage);
  if (values.upstream !== undefined) {
    try {
      const url = new URL(values.upstream);
      if (url.protocol !== "http:" && url.protocol !== "https:") throw new Error("not http");
    } catch {
      throw new CliError(`--upstream must be an http(s) URL, got '${values.upstream}'`, EXIT.usage);
    }
  }
  const port = values.port === undefined ? 0 : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new CliError(`--port must be a port number, got '${values.port}'`, EXIT.usage);
  if (values.provider !== undefined && !isProviderName(values.provider)) {
    throw new CliError(`unknown provider '${values.provider}'. Known providers: ${supportedProviders().join(", ")}.`, EXIT.usage);
  }
  const host = values.host ?? "127.0.0.1";
  const allowHosts = values["allow-host"] ?? [];
  for (const name of allowHosts) if (!isHostNameSyntax(name)) throw new CliError(`--allow-host takes a host name (no scheme, port or path), got '${name}'`, EXIT.usage);
  if (!isLoopback(host) && !values.expose) throw new CliError(`--host ${host} is not a loopback address: anyone who reaches it can use the keys its clients send. Add --expose to bind it anyway (and --allow-host with the names clients use).`, EXIT.usage);
  if (!isLoopback(host) && allowHosts.length === 0) throw new CliError(`--host ${host} needs at least one --allow-host NAME: the Host names the proxy answers besides loopback ones.`, EXIT.usage);
  const maxBodyBytes = values["max-body-size"] === undefined ? DEFAULT_MAX_BODY_BYTES : parseSize(values["max-body-size"]);
  if (maxBodyBytes === null) throw new CliError(`--max-body-size takes a size in bytes (suffixes k, m, g), got '${values["max-body-size"]}'`, EXIT.usage);
  const logFormat = values["log-format"] ?? "text";
  if (logFormat !== "text" && logFormat !== "json") throw new CliError(`--log-format is text or json, got '${logFormat}'`, EXIT.usage);
  const shutdownSeconds = values["shutdown-timeout"] === undefined ? 30 : Number(values["shutdown-timeout"]);
  if (!Number.isFinite(shutdownSeconds) || shutdownSeconds < 0 || values["shutdown-timeout"] === "") throw new CliError(`--shutdown-timeout takes seconds, got '${values["shutdown-timeout"]}'`, EXIT.usage);
  if (values.target !== undefined && !findTarget(values.target)) throw new CliError(`unknown target '${values.target}'. Known targets: ${SCHEMA_TARGETS.join(", ")}.`, EXIT.usage);
  return {
    upstream: values.upstream,
    config: values.config,
    port,
    host,
    allowHosts,
    maxBodyBytes,
    logFormat,
    shutdownMs: shutdownSeconds * 1000,
    withheldNotice: values["withheld-notice"] === true,
    provider: values.provider as ProviderName | undefined,
    target: values.target,
    repairs: { schemas: !values["no-schemas"], history: !values["no-history"], responses: !values["no-responses"], recovery: !values["no-recovery"] },
    textCalls: values["text-calls"],
    tools: values.tools,
  };
}

/**
 * One request's log line, written with the others of the same event-loop turn in one write:
 * stderr is synchronous on pipes and files, and one system call per request shows under load.
 */
function batchedLog(ctx: CliContext, prefix: string): (line: string) => void {
  let pending = "";
  const flush = (): void => {
    const text = pending;
    pending = "";
    ctx.err(text);
  };
  return (line) => {
    if (pending === "") setImmediate(flush);
    pending += `${prefix}${line}\n`;
  };
}

/** `64m`, `512k`, `1048576`: a size in bytes, or null. */
export function parseSize(text: string): number | null {
  const match = /^(\d{1,15})([kmg]i?b?)?$/i.exec(text.trim());
  if (!match) return null;
  const unit = (match[2] ?? "").charAt(0).toLowerCase();
  const bytes = Number(match[1]) * (unit === "k" ? 1024 : unit === "m" ? 1024 ** 2 : unit === "g" ? 1024 ** 3 : 1);
  return bytes > 0 && Number.isSafeInteger(bytes) ? bytes : null;
}

/** Parses the arguments and starts the proxy; `run` adds the wait for a signal. Tests call this. */
export async function startProxyCommand(args: string[], ctx: CliContext): Promise<ProxyServer> {
  return (await startParsed(args, ctx)).proxy;
}

async function startParsed(args: string[], ctx: CliContext): Promise<{ proxy: ProxyServer; options: ProxyArgs }> {
  const options = parse(args);
  const textCalls = await textCallsOption("proxy", options.textCalls, options.tools, ctx.cwd);
  let routes: ProxyRoute[] = [];
  if (options.config !== undefined) {
    try {
      routes = (await loadProxyConfig(resolve(ctx.cwd, options.config))).routes;
    } catch (error) {
      throw new CliError(`--config ${(error as Error).message}`, EXIT.input);
    }
  }
  let proxy: ProxyServer;
  try {
    proxy = await startProxy({
      ...(options.upstream !== undefined ? { upstream: options.upstream } : {}),
      routes,
      port: options.port,
      host: options.host,
      allowHosts: options.allowHosts,
      maxBodyBytes: options.maxBodyBytes,
      logFormat: options.logFormat,
      withheldNotice: options.withheldNotice,
      repairs: options.repairs,
      ...(options.provider ? { provider: options.provider } : {}),
      ...(options.target ? { target: options.target } : {}),
      ...(textCalls ? { textCalls } : {}),
      log: batchedLog(ctx, options.logFormat === "json" ? "" : "toolwire proxy: "),
    });
  } catch (error) {
    throw new CliError(`cannot listen on ${options.host}:${options.port}: ${(error as Error).message}`, EXIT.input);
  }
  if (!isLoopback(options.host)) ctx.err(`toolwire proxy: warning: listening on ${options.host}, off loopback: whoever reaches it uses the keys its clients send; Host names answered: ${["localhost", "127.0.0.1", "::1", ...options.allowHosts].join(", ")}\n`);
  const targets = [...routes.map((route) => `${route.prefix} -> ${route.upstream}`), ...(options.upstream !== undefined ? [`${routes.length > 0 ? "/ (other paths) -> " : ""}${options.upstream}`] : [])];
  ctx.out(`toolwire proxy: ${proxy.url} ${targets.length === 1 && routes.length === 0 ? `-> ${targets[0]}` : `routes: ${targets.join(", ")}`}\n`);
  return { proxy, options };
}

/**
 * Serves until SIGTERM or SIGINT, then drains: no new connections, open requests (streams
 * included) finish for up to --shutdown-timeout, a second signal cuts them; exit 0 either way.
 */
export async function run(args: string[], ctx: CliContext): Promise<number> {
  const { proxy, options } = await startParsed(args, ctx);
  await firstEvent(process, ["SIGINT", "SIGTERM"]);
  ctx.err(`toolwire proxy: draining: no new connections; open requests have ${options.shutdownMs / 1000}s to finish\n`);
  let forced = false;
  const force = (): void => {
    forced = true;
    void proxy.shutdown(0);
  };
  process.on("SIGINT", force);
  process.on("SIGTERM", force);
  const { cut } = await proxy.shutdown(options.shutdownMs).finally(() => {
    process.off("SIGINT", force);
    process.off("SIGTERM", force);
  });
  ctx.err(`toolwire proxy: stopped${cut > 0 ? ` (${cut} request${cut === 1 ? "" : "s"} cut ${forced ? "by a second signal" : "at the deadline"})` : ""}\n`);
  return EXIT.ok;
}
