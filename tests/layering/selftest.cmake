# The layering check finds what it is meant to find: writes a small tree with
# one violation of each kind into QF_WORK_DIR and expects each to be reported,
# and a clean tree to pass.
include(${CMAKE_CURRENT_LIST_DIR}/check_layering.cmake)

set(root "${QF_WORK_DIR}/layering_fixture")
file(REMOVE_RECURSE "${root}")
macro(put rel text)
  file(WRITE "${root}/${rel}" "${text}\n")
endmacro()
# Allowed: these must not be reported.
put(inference/model/context.cpp "#include \"inference/backend/backend.h\"\n#include \"inference/core/errors.h\"")
put(inference/backend/backend_select.cpp "#include \"inference/backend/cuda/cuda_backend.h\"")
put(inference/backend/cuda/cuda_backend.cpp "#include \"inference/backend/backend.h\"")
put(inference/backend/cpu/local.cpp "#include \"ops.h\"\n#include <vector>")
put(text/position.cpp "#include \"text/lines.h\"\n#include \"text/utf8.h\"")
put(lsp/jsonrpc.cpp "#include \"text/utf8.h\"")
put(indexing/document.h "#include \"text/position.h\"")
put(inference/tokenizer/pretokenize.cpp "#include \"inference/tokenizer/unicode.h\"\n#include \"text/utf8.h\"")
put(server/completion/decode/generator.cpp "#include \"server/completion/api/lm.h\"\n#include \"indexing/lines.h\"\n#include \"text/utf8.h\"")
put(server/net/url.cpp "#include \"server/net/url.h\"")
put(server/routing/router.cpp "#include \"server/completion/api/source_failure.h\"\n#include \"server/net/sha256.h\"")
put(server/remote/remote_source.cpp "#include \"server/net/http_client.h\"\n#include \"server/completion/postprocess/cleanup.h\"")
put(server/cli/cmd_serve.cpp "#include \"server/daemon/bridge.h\"\n#include \"server/http/http_server.h\"\n#include \"lsp/protocol.h\"")
put(server/daemon/bridge.cpp "#include \"server/binding/stdio_server.h\"\n#include \"server/completion/pipeline/provider_factory.h\"")
put(server/main.cpp "#include \"server/cli/commands.h\"")
qf_layering_check("${root}" clean)
if(clean)
  message(FATAL_ERROR "clean tree reported: ${clean}")
endif()

# One violation of each kind.
put(inference/backend/cpu_backend.cpp "#include \"inference/model/attention.h\"")
put(inference/backend/backend.h "  #  include \"inference/model/rope.h\" // a comment; with a semicolon")
put(inference/core/cancellation.h "#include \"server/completion/deadline_watch.h\"")
put(inference/gguf/quantize_model.cpp "#include \"inference/backend/cpu/ops.h\"")
put(inference/model/weights.cpp "#include \"inference/backend/cuda/cuda_ops.h\"")
put(inference/backend/cuda_stub.cpp "__attribute__((weak)) int make_cuda_backend() { return 0; }")
put(inference/tokenizer/bpe.cpp "#include \"../gguf/gguf.h\"")
put(lsp/transport.cpp "#include \"inference/core/cancellation.h\"")
put(lsp/protocol.cpp "#include \"indexing/document.h\"")
put(indexing/document.cpp "#include \"lsp/protocol.h\"")
put(text/lines.cpp "#include \"indexing/document.h\"")
put(inference/sampling/sampler.cpp "#include \"text/utf8.h\"")
put(server/net/url_encode.cpp "#include \"text/utf8.h\"")
put(server/completion/pipeline/pipeline.cpp "#include \"server/core/scheduler.h\"")
put(server/net/http_client.cpp "#include \"server/core/settings.h\"")
put(server/routing/make_router.cpp "#include \"server/core/model_locator.h\"")
put(server/remote/remote_api.cpp "#include \"server/core/server_core.h\"")
put(server/core/scheduler.cpp "#include \"lsp/jsonrpc.h\"")
put(server/http/fim_api.cpp "#include \"server/binding/lsp_server.h\"")
put(server/completion/prompt/prompt_layout.cpp "#include \"server/completion/decode/generator.h\"")
put(server/shiny/new_thing.cpp "#include \"server/core/stats.h\"")
put(inference/backend/cuda/CMakeLists.txt "target_link_libraries(qf_cuda PUBLIC\n  qf_inference CUDA::cudart)")
qf_layering_check("${root}" found)
set(expected
  "inference/backend/backend.h: includes inference/model/rope.h"
  "inference/backend/cpu_backend.cpp: includes inference/model/attention.h"
  "inference/core/cancellation.h: includes server/"
  "inference/gguf/quantize_model.cpp: includes inference/backend/cpu/ops.h"
  "inference/model/weights.cpp: includes inference/backend/cuda/cuda_ops.h"
  "inference/backend/cuda_stub.cpp: defines a weak symbol"
  "inference/tokenizer/bpe.cpp: includes \"../gguf/gguf.h\""
  "lsp/transport.cpp: includes inference/"
  "lsp/protocol.cpp: includes indexing/"
  "indexing/document.cpp: includes lsp/"
  "text/lines.cpp: includes indexing/"
  "inference/sampling/sampler.cpp: includes text/utf8.h (inference/sampling/ must not depend on text/)"
  "server/net/url_encode.cpp: includes text/utf8.h (server/net/ must not depend on text/)"
  "server/completion/pipeline/pipeline.cpp: includes server/core/scheduler.h"
  "server/net/http_client.cpp: includes server/core/settings.h"
  "server/routing/make_router.cpp: includes server/core/model_locator.h"
  "server/remote/remote_api.cpp: includes server/core/server_core.h"
  "server/core/scheduler.cpp: includes lsp/jsonrpc.h"
  "server/http/fim_api.cpp: includes server/binding/lsp_server.h"
  "server/completion/prompt/prompt_layout.cpp: includes server/completion/decode/generator.h"
  "server/shiny/new_thing.cpp: server/shiny/ is not in the layering table"
  "qf_cuda links qf_inference")
set(missing "")
foreach(e IN LISTS expected)
  string(FIND "${found}" "${e}" at)
  if(at EQUAL -1)
    list(APPEND missing "${e}")
  endif()
endforeach()
list(LENGTH found n_found)
list(LENGTH expected n_expected)
if(missing OR NOT n_found EQUAL n_expected)
  string(REPLACE ";" "\n  " found_text "${found}")
  message(FATAL_ERROR "layering self-test: missing [${missing}]; reported ${n_found} of ${n_expected}:\n  ${found_text}")
endif()
message("layering self-test: all ${n_expected} violations reported, clean tree passes")
file(REMOVE_RECURSE "${root}")
