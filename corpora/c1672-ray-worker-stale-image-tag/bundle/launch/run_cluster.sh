#!/bin/bash
# copied from vllm examples/online_serving/run_cluster.sh, local changes marked "pod3"
#
# Usage: bash run_cluster.sh <docker_image> <head_node_ip> <--head|--worker> <path_to_hf_home> [additional docker args]

if [ $# -lt 4 ]; then
    echo "Usage: $0 docker_image head_node_ip --head|--worker path_to_hf_home [additional_args...]"
    exit 1
fi

DOCKER_IMAGE="$1"
HEAD_NODE_ADDRESS="$2"
NODE_TYPE="$3"  # Should be --head or --worker
PATH_TO_HF_HOME="$4"
shift 4

ADDITIONAL_ARGS=("$@")

if [ "${NODE_TYPE}" != "--head" ] && [ "${NODE_TYPE}" != "--worker" ]; then
    echo "Error: Node type must be --head or --worker"
    exit 1
fi

cleanup() {
    docker stop node
    docker rm node
}
trap cleanup EXIT

RAY_START_CMD="ray start --block"
if [ "${NODE_TYPE}" == "--head" ]; then
    RAY_START_CMD+=" --head --port=6379"
else
    RAY_START_CMD+=" --address=${HEAD_NODE_ADDRESS}:6379"
fi

# pod3: IB rails + host networking, bigger shm, memlock for GPUDirect RDMA
docker run \
    --entrypoint /bin/bash \
    --network host \
    --name node \
    --shm-size 64g \
    --ulimit memlock=-1 \
    --gpus all \
    --device /dev/infiniband \
    -v "${PATH_TO_HF_HOME}:/root/.cache/huggingface" \
    -v /data/logs:/data/logs \
    "${ADDITIONAL_ARGS[@]}" \
    "${DOCKER_IMAGE}" -c "${RAY_START_CMD}"
