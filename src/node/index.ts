// Node-only helpers (`toolwire/node`): the replay server, the proxy, and a file sink for `record`.
export { ReplayLoadError, startReplayServer, type ReplayServer, type ReplayServerOptions } from "./replay-server.js";
export { fileSink, type FileSinkOptions } from "./record-file.js";
export { startProxy, type ProxyOptions, type ProxyServer } from "./proxy.js";
