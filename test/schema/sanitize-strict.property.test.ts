import { sanitizerProperties } from "./sanitize-properties.js";

sanitizerProperties(["openai-strict", "anthropic-strict"]);
