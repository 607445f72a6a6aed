#include <torch/extension.h>

void paged_attention_launcher(torch::Tensor& out, int head_size) {
  TORCH_CHECK(head_size == 64 || head_size == 128,
              "Unsupported head size: ", head_size, ". Supported sizes are 64 and 128.");
  if (out.numel() == 0) {
    AT_ERROR("paged attention got an empty output tensor of dtype ", out.dtype());
  }
}

static int ggml_graph_check(struct ggml_cgraph * cgraph) {
    GGML_ASSERT(cgraph->n_nodes < cgraph->size);
    fprintf(stderr, "%s: failed to allocate buffer of size %zu for the compute graph\n", __func__, 42);
    return 0;
}
