#!/bin/bash
# /opt/k3/run_cluster.sh - local copy of vLLM's examples/online_serving/run_cluster.sh (+ logging)
# usage: run_cluster.sh <image> <head_ip> --head|--worker <hf_home> [docker args...]
DOCKER_IMAGE="$1"; HEAD_NODE_ADDRESS="$2"; NODE_TYPE="$3"; PATH_TO_HF_HOME="$4"; shift 4
ADDITIONAL_ARGS=("$@")
CONTAINER_NAME="node-k3"
cleanup() { docker stop "${CONTAINER_NAME}" >/dev/null 2>&1; docker rm "${CONTAINER_NAME}"; }
trap 'echo "Received SIGTERM, stopping Ray ${NODE_TYPE#--} container ${CONTAINER_NAME}"; cleanup; exit 0' TERM
if [ "${NODE_TYPE}" == "--head" ]; then
  echo "Launching Ray head node, image ${DOCKER_IMAGE}"
  RAY_START_CMD="ray start --block --head --port=6379 --node-ip-address=${HEAD_NODE_ADDRESS}"
else
  echo "Launching Ray worker node, head at ${HEAD_NODE_ADDRESS}, image ${DOCKER_IMAGE}"
  RAY_START_CMD="ray start --block --address=${HEAD_NODE_ADDRESS}:6379"
fi
docker run --entrypoint /bin/bash --network host --name "${CONTAINER_NAME}" --shm-size 64g --gpus all \
  --ulimit memlock=-1 --device /dev/infiniband -v "${PATH_TO_HF_HOME}:/models" -e HF_HOME=/models/hf \
  "${ADDITIONAL_ARGS[@]}" "${DOCKER_IMAGE}" -c "${RAY_START_CMD}" &
wait $!
rc=$?
if [ $rc -ne 0 ]; then echo "Ray ${NODE_TYPE#--} exited with status $rc, removing container ${CONTAINER_NAME}"; docker rm "${CONTAINER_NAME}"; fi
exit $rc
