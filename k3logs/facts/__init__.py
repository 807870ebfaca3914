"""Facts of the environment. In: the dumps a bundle holds (nvidia-smi, pip, env, command lines, k8s specs) and
log events. Out: typed facts, and the checks of those facts against the deployment facts (patterns/facts.toml)."""
