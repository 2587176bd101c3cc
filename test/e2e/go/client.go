// A client in plain Go (standard library only) that reads streams through `toolwire proxy`.
//
// It is the kind of client a hand-written Go agent has: net/http, SSE read line by line with
// bufio.Reader, calls accumulated the naive way. Anthropic: input_json_delta fragments
// concatenated per block index, the content_block_start input used only when no delta came.
// Chat Completions: id, name and arguments concatenated per tool_calls index. Each call's
// arguments go through json.Unmarshal and nothing is repaired here: through the proxy it must see
// exactly the calls toolwire decodes; straight from the provider it does not.
//
// Usage: client <proxy url> <anthropic|openai-chat> <stream key>...
// Prints one JSON line per stream: {"key":…,"calls":[{"id","name","arguments"}]} or {"key":…,"error":…}.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strings"
	"time"
)

type call struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

type sseEvent struct {
	name string
	data string
}

var client = &http.Client{Timeout: 20 * time.Second}

// readEvents calls handle for each SSE event until the body ends or handle says stop.
func readEvents(body io.Reader, handle func(sseEvent) (stop bool, err error)) error {
	reader := bufio.NewReader(body)
	var data []string
	name := ""
	flush := func() (bool, error) {
		if len(data) == 0 {
			return false, nil
		}
		event := sseEvent{name: name, data: strings.Join(data, "\n")}
		data, name = nil, ""
		return handle(event)
	}
	for {
		raw, readErr := reader.ReadString('\n')
		if readErr != nil && readErr != io.EOF {
			return readErr
		}
		if raw == "" && readErr == io.EOF {
			break
		}
		line := strings.TrimRight(raw, "\r\n")
		switch {
		case line == "":
			if stop, err := flush(); stop || err != nil {
				return err
			}
		case strings.HasPrefix(line, ":"):
		case strings.HasPrefix(line, "data:"):
			data = append(data, strings.TrimPrefix(line[5:], " "))
		case strings.HasPrefix(line, "event:"):
			name = strings.TrimSpace(line[6:])
		}
		if readErr == io.EOF {
			break
		}
	}
	_, err := flush()
	return err
}

func post(url, key string, body any) (*http.Response, error) {
	payload, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	request, err := http.NewRequest("POST", url, bytes.NewReader(payload))
	if err != nil {
		return nil, err
	}
	request.Header.Set("content-type", "application/json")
	request.Header.Set("x-api-key", "sk-ant-go-test")
	request.Header.Set("authorization", "Bearer sk-go-test")
	request.Header.Set("anthropic-version", "2023-06-01")
	request.Header.Set("x-toolwire-stream", key)
	response, err := client.Do(request)
	if err != nil {
		return nil, err
	}
	if response.StatusCode != http.StatusOK {
		text, _ := io.ReadAll(response.Body)
		response.Body.Close()
		return nil, fmt.Errorf("HTTP %d: %s", response.StatusCode, text)
	}
	return response, nil
}

// arguments parses a call's accumulated arguments as a Go tool would before running it. The raw
// text is kept (numbers stay exact); json.Unmarshal rejects anything that is not one JSON value.
func arguments(text []byte) (json.RawMessage, error) {
	var parsed json.RawMessage
	if err := json.Unmarshal(text, &parsed); err != nil {
		return nil, fmt.Errorf("invalid tool arguments JSON: %w", err)
	}
	return parsed, nil
}

type anthropicEvent struct {
	Type         string `json:"type"`
	Index        int    `json:"index"`
	ContentBlock struct {
		Type  string          `json:"type"`
		ID    string          `json:"id"`
		Name  string          `json:"name"`
		Input json.RawMessage `json:"input"`
	} `json:"content_block"`
	Delta struct {
		Type        string `json:"type"`
		PartialJSON string `json:"partial_json"`
	} `json:"delta"`
	Error struct {
		Message string `json:"message"`
	} `json:"error"`
}

type anthropicBlock struct {
	id, name string
	input    json.RawMessage
	buf      strings.Builder
}

func anthropicCalls(base, key string) ([]call, error) {
	response, err := post(base+"/v1/messages", key, map[string]any{
		"model": "m", "max_tokens": 100, "stream": true,
		"messages": []map[string]any{{"role": "user", "content": "hi"}},
	})
	if err != nil {
		return nil, err
	}
	defer response.Body.Close()
	blocks := map[int]*anthropicBlock{}
	err = readEvents(response.Body, func(sse sseEvent) (bool, error) {
		var event anthropicEvent
		if err := json.Unmarshal([]byte(sse.data), &event); err != nil {
			return true, err
		}
		switch event.Type {
		case "content_block_start":
			if event.ContentBlock.Type == "tool_use" {
				blocks[event.Index] = &anthropicBlock{id: event.ContentBlock.ID, name: event.ContentBlock.Name, input: event.ContentBlock.Input}
			}
		case "content_block_delta":
			if block, ok := blocks[event.Index]; ok && event.Delta.Type == "input_json_delta" {
				block.buf.WriteString(event.Delta.PartialJSON)
			}
		case "error":
			return true, errors.New(event.Error.Message)
		}
		return false, nil
	})
	if err != nil {
		return nil, err
	}
	indexes := make([]int, 0, len(blocks))
	for index := range blocks {
		indexes = append(indexes, index)
	}
	sort.Ints(indexes)
	out := []call{}
	for _, index := range indexes {
		block := blocks[index]
		args := block.input
		if block.buf.Len() > 0 {
			if args, err = arguments([]byte(block.buf.String())); err != nil {
				return nil, err
			}
		}
		if args == nil {
			args = json.RawMessage("null")
		}
		out = append(out, call{ID: block.id, Name: block.name, Arguments: args})
	}
	return out, nil
}

type chatChunk struct {
	Error   json.RawMessage `json:"error"`
	Choices []struct {
		FinishReason *string `json:"finish_reason"`
		Delta        struct {
			ToolCalls []struct {
				Index    int    `json:"index"`
				ID       string `json:"id"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
	} `json:"choices"`
}

type chatCall struct {
	id, name, arguments strings.Builder
}

func chatCalls(base, key string) ([]call, error) {
	response, err := post(base+"/v1/chat/completions", key, map[string]any{
		"model": "m", "stream": true,
		"messages": []map[string]any{{"role": "user", "content": "hi"}},
	})
	if err != nil {
		return nil, err
	}
	defer response.Body.Close()
	calls := map[int]*chatCall{}
	finish := ""
	err = readEvents(response.Body, func(sse sseEvent) (bool, error) {
		if strings.TrimSpace(sse.data) == "[DONE]" {
			return true, nil
		}
		var chunk chatChunk
		if err := json.Unmarshal([]byte(sse.data), &chunk); err != nil {
			return true, err
		}
		if len(chunk.Error) > 0 && string(chunk.Error) != "null" {
			var body struct {
				Message string `json:"message"`
			}
			_ = json.Unmarshal(chunk.Error, &body)
			return true, errors.New(body.Message)
		}
		for _, choice := range chunk.Choices {
			if choice.FinishReason != nil && *choice.FinishReason != "" {
				finish = *choice.FinishReason
			}
			for _, entry := range choice.Delta.ToolCalls {
				slot, ok := calls[entry.Index]
				if !ok {
					slot = &chatCall{}
					calls[entry.Index] = slot
				}
				slot.id.WriteString(entry.ID)
				slot.name.WriteString(entry.Function.Name)
				slot.arguments.WriteString(entry.Function.Arguments)
			}
		}
		return false, nil
	})
	if err != nil {
		return nil, err
	}
	if finish == "" {
		return nil, errors.New("missing finish_reason")
	}
	indexes := make([]int, 0, len(calls))
	for index := range calls {
		indexes = append(indexes, index)
	}
	sort.Ints(indexes)
	out := []call{}
	for _, index := range indexes {
		slot := calls[index]
		args, err := arguments([]byte(slot.arguments.String()))
		if err != nil {
			return nil, err
		}
		out = append(out, call{ID: slot.id.String(), Name: slot.name.String(), Arguments: args})
	}
	return out, nil
}

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: client <proxy url> <anthropic|openai-chat> <stream key>...")
		os.Exit(2)
	}
	base, protocol, keys := os.Args[1], os.Args[2], os.Args[3:]
	encoder := json.NewEncoder(os.Stdout)
	for _, key := range keys {
		var calls []call
		var err error
		if protocol == "anthropic" {
			calls, err = anthropicCalls(base, key)
		} else {
			calls, err = chatCalls(base, key)
		}
		// Reported, not raised: the test compares.
		if err != nil {
			_ = encoder.Encode(map[string]any{"key": key, "error": err.Error()})
		} else {
			_ = encoder.Encode(map[string]any{"key": key, "calls": calls})
		}
	}
}
