import logging
import warnings

logger = logging.getLogger(__name__)


class ModelLoader:
    def load_state(self, path, missing):
        if not path:
            raise ValueError(f"Checkpoint path {path!r} does not exist or is not a directory")
        if missing:
            logger.warning("Some weights of the model checkpoint at %s were not used when "
                           "initializing %s: %s", path, type(self).__name__, missing)
        warnings.warn("`load_in_8bit` is deprecated and will be removed, pass a "
                      "quantization_config instead", FutureWarning)
        return path


def check_shape(a, b):
    torch._check(a == b, lambda: f"shape mismatch: expected {a} but got {b} for the fused weight")
    assert a > 0, "number of attention heads must be a positive integer, got %d" % a
