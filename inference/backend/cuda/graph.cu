// CUDA graphs: record what a stream is given (nothing runs while recording),
// instantiate it once, and launch the whole step with one call. A decode step
// of a 0.5B model is ~350 small kernels; launched one by one their launch cost
// is several times the kernels' own run time on a fast GPU.
//
// Capture is thread-local: other threads' CUDA calls are unaffected, and a
// call on this thread that is illegal during capture (a synchronisation, a
// cudaMalloc) invalidates the recording, which end_capture() then reports.
#include "inference/backend/cuda/common.cuh"

namespace qf::infer::cuda {

struct graph_exec {
  cudaGraphExec_t exec = nullptr;
};

void begin_capture(stream_t stream) {
  QF_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
}

graph_exec* end_capture(stream_t stream, bool instantiate, const char** why) {
  cudaGraph_t graph = nullptr;
  cudaError_t e = cudaStreamEndCapture(stream, &graph);
  graph_exec* out = nullptr;
  if (e == cudaSuccess && graph && instantiate) {
    cudaGraphExec_t exec = nullptr;
    e = cudaGraphInstantiate(&exec, graph, 0);
    if (e == cudaSuccess) out = new graph_exec{exec};
  }
  if (graph) cudaGraphDestroy(graph);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();  // a failed capture is not a sticky error: clear it
    if (why) *why = cudaGetErrorString(e);
  } else if (!graph && why) {
    *why = cudaGetErrorString(cudaErrorStreamCaptureInvalidated);
  }
  return out;
}

void launch_graph(graph_exec* g, stream_t stream) { QF_CUDA_CHECK(cudaGraphLaunch(g->exec, stream)); }

void destroy_graph(graph_exec* g) {
  if (!g) return;
  cudaGraphExecDestroy(g->exec);
  delete g;
}

}  // namespace qf::infer::cuda
