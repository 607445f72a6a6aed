import logging

logger = logging.getLogger(__name__)


class RocmPlatform:
    def get_attn_backend_cls(cls, selected, backends):
        logger.info("Using %s backend out of potential backends: %s.", selected, backends)
        return selected
