// Node-only helpers (`toolwire/node`): the replay server, the proxy, and a file sink for `record`.
export { ReplayLoadError, startReplayServer, type ReplayServer, type ReplayServerOptions } from "./replay-server.js";
export { fileSink, type FileSinkOptions } from "./record-file.js";
export { createProxyHandler, startProxy, type ProxyLogRecord, type ProxyOptions, type ProxyRoute, type ProxyServer } from "./proxy.js";
export { loadProxyConfig, parseProxyConfig, type ProxyConfig } from "./proxy-config.js";
export { createUpstreamFetch } from "./upstream-fetch.js";
