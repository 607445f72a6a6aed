import logging
import warnings

logger = logging.getLogger(__name__)


class ModelLoader:
    def load_state(self, path, missing):
        if not path:
            raise ValueError(f"Checkpoint path {path!r} does not exist or is not a directory")
        if missing:
            logger.warning("Some weights of {} were not used when initializing the model: {}".format(
                path, missing))
        return path


def check_shape(a, b):
    torch._check(a == b, lambda: f"shape mismatch: expected {a} but got {b} for the fused weight")
