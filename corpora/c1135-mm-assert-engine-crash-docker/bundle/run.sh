# /opt/vl-ocr/run.sh on gpu-vl-02 (started by ops on 2026-09-18 ~11:52 UTC)
docker run -d --name vl-ocr --runtime nvidia --gpus '"device=0,1"' --ipc=host \
  -p 127.0.0.1:8000:8000 -v /data/hf:/root/.cache/huggingface -e HF_HUB_OFFLINE=1 \
  vllm/vllm-openai:v0.10.2 \
  --model Qwen/Qwen2.5-VL-72B-Instruct-AWQ --served-model-name qwen2.5-vl-72b --tensor-parallel-size 2 \
  --max-model-len 32768 --gpu-memory-utilization 0.9 --enable-prefix-caching \
  --limit-mm-per-prompt '{"image": 4}' --enable-log-requests --max-log-len 1500
