import { sanitizerProperties } from "./sanitize-properties.js";

sanitizerProperties(["openai", "anthropic", "bedrock", "gemini"]);
