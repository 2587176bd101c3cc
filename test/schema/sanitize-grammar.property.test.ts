import { sanitizerProperties } from "./sanitize-properties.js";

sanitizerProperties(["xai", "llamacpp", "kimi", "fireworks"]);
