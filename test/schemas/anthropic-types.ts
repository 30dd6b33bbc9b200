/** The Anthropic SDK's reply types that parley writes: the roots scripts/vendor-schemas.ts turns into JSON Schema. */
import type { PageResponse } from "@anthropic-ai/sdk/core/pagination";
import type { Message, MessageTokensCount, RawMessageStreamEvent } from "@anthropic-ai/sdk/resources/messages/messages";
import type { ModelInfo } from "@anthropic-ai/sdk/resources/models";
import type { ErrorResponse } from "@anthropic-ai/sdk/resources/shared";

export type AnthropicMessage = Message;
export type AnthropicStreamEvent = RawMessageStreamEvent;
export type AnthropicTokensCount = MessageTokensCount;
export type AnthropicModel = ModelInfo;
export type AnthropicModelList = PageResponse<ModelInfo>;
export type AnthropicError = ErrorResponse;
