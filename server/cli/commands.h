// Subcommands of the quickfill binary besides the LSP server itself. Each is
// implemented in its own file under server/cli/ and returns a process exit code.
// args[0] is the subcommand name.
#pragma once

#include <span>

namespace qf::cli {

int cmd_demo(std::span<char*> args);        // cmd_demo.cpp: drive the real server like an editor
int cmd_run(std::span<char*> args);         // cmd_run.cpp: generate from a prompt
int cmd_perplexity(std::span<char*> args);  // cmd_perplexity.cpp
int cmd_bench(std::span<char*> args);       // cmd_bench.cpp: pp/tg tokens per second
int cmd_gguf(std::span<char*> args);        // cmd_gguf.cpp: convert, quantize, synthesize, inspect
int cmd_settings(std::span<char*> args);    // cmd_settings.cpp: the settings reference from the schema
int cmd_prompt(std::span<char*> args);      // cmd_prompt.cpp: the prompt a completion would use, explained
int cmd_model(std::span<char*> args);       // cmd_model.cpp: pull and list models in the models folder
int cmd_report(std::span<char*> args);      // cmd_report.cpp: the dashboard page from stats JSON
int cmd_doctor(std::span<char*> args);      // cmd_doctor.cpp: what quickfill finds on this machine
int cmd_eval(std::span<char*> args);        // cmd_eval.cpp: suggestion quality on HumanEval-infilling or a repository
int cmd_serve(std::span<char*> args);       // cmd_serve.cpp: the llama-server-compatible HTTP endpoint

}  // namespace qf::cli
