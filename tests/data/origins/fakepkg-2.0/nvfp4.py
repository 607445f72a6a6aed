import logging

logger = logging.getLogger(__name__)


def select_nvfp4_moe_backend(config, backends):
    def _make_log_backend(backend):
        available_backend_strs = [b.value for b in backends]
        return (
            f"Using '{backend.value}' NvFp4 MoE backend out "
            f"of potential backends: {available_backend_strs}."
        )

    for backend in backends:
        if backend.supported(config):
            logger.info_once(_make_log_backend(backend))
            return backend
    raise NotImplementedError("No NvFp4 MoE backend supports the deployment configuration.")
