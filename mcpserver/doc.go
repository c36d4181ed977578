// Package mcpserver is the Model Context Protocol face of the v1 API: it
// lets an AI assistant work with the service through tools, to run tasks,
// agents, scripts and single browser actions, follow, answer and cancel
// runs, and manage what runs use (agents, folders, tags, schedules,
// browser sessions and profiles), and see what holds a secret
// (credentials, custom models) without ever taking or showing the secret.
//
// # One set of tools, two transports
//
// The tools are written once, over the Go SDK of this project
// (*client.Client), and never talk HTTP themselves. Who they reach depends
// only on the client they are given:
//
//   - `abctl mcp` serves them over stdio (ServeStdio) with the client of
//     the CLI's current profile, which points at a local daemon or at the
//     hosted service;
//   - the daemon serves them at /mcp over streamable HTTP (package
//     daemon/api) with a client whose HTTP transport calls the daemon's
//     own API handler in process, carrying the x-api-key of the MCP
//     request.
//
// So a tool behaves the same whichever face it is reached through, and a
// service error reaches the assistant with the service's own detail.
//
// # Names and arguments
//
// Tool names and arguments follow the hosted service's MCP server
// (docs/mcp.md, "The tools"): names are prefixed "skyvern_" and shaped
// <noun>_<verb> (skyvern_workflow_run, skyvern_folder_list, ...). Where
// the hosted server has no tool for a v1 operation (bulk cancel, webhook
// retry, agent tags, the tag registry, scripts, run_action, ...), the
// tool is named in the same style and its description says that it is
// abctl's own.
//
// # Inputs, outputs and errors
//
// Every tool has a typed input struct whose JSON schema (with descriptions,
// enums, defaults and bounds) is what the assistant sees, and a typed
// output struct returned as structured content (and as JSON text for
// clients that read only text). Arguments that do not match the schema,
// and replies of the service that are not 2xx, come back as tool errors
// (isError) whose text carries the status and the service's detail; the
// session stays usable.
//
// Agent definitions are taken as YAML or JSON text (format auto, json or
// yaml), as the hosted service's tools take them: JSON is decoded here so
// that a misspelt field is named rather than dropped, YAML is sent to the
// service as yaml_definition. skyvern_workflow_get gives the definition as
// JSON, or as YAML (agentfile.RenderDefinition: an agent file without
// abctl's own keys), either of which skyvern_workflow_update takes back.
//
// Waiting tools (skyvern_run_task, skyvern_workflow_run with wait) poll
// with client.RunsService.Wait for at most timeout_seconds and then report
// the run as it stands, saying that it is still going and how to follow it.
//
// # How the tools are built
//
// The tools come in groups, one per resource (runs, agents, folders,
// credentials, ...). A group is a small type holding only the client
// services its tools call, and a register method that adds its tools to
// the server; New builds each group from the client. The tools that
// start a run share one runFollower, which waits for the run when asked.
// What the groups do alike is written once: addTool (schemas, errors),
// listPage and pager (the paging list tools), shapeAll, answerWith and
// deleted (the shape of lists, gets and deletes).
//
// What a client is told about the tools (names, descriptions, schemas,
// annotations) is pinned byte for byte by a test against
// testdata/tools.json: a change to it is a change of interface.
package mcpserver
