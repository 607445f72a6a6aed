static fake_errtab_t fake_errtab[] = {
	{ EFAKE_INVALID_GRES, "Invalid generic resource (gres) specification" },
};

static void fake_cuda_error(const char *msg) {
	GGML_LOG_ERROR(FAKE_CUDA_NAME " error: %s\n", msg);
	error("Unable to create step for job %u: %m", job_id);
}
