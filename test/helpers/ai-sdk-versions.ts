import * as bedrockAnthropic from "@ai-sdk/amazon-bedrock/anthropic";

/**
 * Claude on Bedrock's factory: `createBedrockAnthropic` in @ai-sdk/amazon-bedrock 4 (AI SDK 6, the
 * dev dependency) and `createAmazonBedrockAnthropic` in 5 (AI SDK 7, scripts/interop-node22.sh),
 * with the same settings.
 */
export const createClaudeOnBedrock = ((bedrockAnthropic as Record<string, unknown>).createAmazonBedrockAnthropic ??
  bedrockAnthropic.createBedrockAnthropic) as typeof bedrockAnthropic.createBedrockAnthropic;
