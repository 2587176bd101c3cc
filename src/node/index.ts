// Node-only helpers (`toolwire/node`): the replay server and a file sink for `record`.
export {
  createReplayHandler,
  loadReplayStreams,
  ReplayLoadError,
  startReplayServer,
  type ReplayHandlerOptions,
  type ReplayRequestLog,
  type ReplayServer,
  type ReplayServerOptions,
  type ReplayStream,
} from "./replay-server.js";
export { fileSink, type FileSinkOptions } from "./record-file.js";
export { createProxyHandler, repairSummary, startProxy, type ProxyLogRecord, type ProxyOptions, type ProxyRoute, type ProxyServer } from "./proxy.js";
export { loadProxyConfig, parseProxyConfig, type ProxyConfig } from "./proxy-config.js";
export { createUpstreamFetch } from "./upstream-fetch.js";
