# llm-support-70b.nomad.hcl  (job version 4, submitted 2026-11-14 08:40 UTC by ci-deploy)
# change in v4: model switched from /models/acme-support-70b-v2 (safetensors, 8-bit) to the
# new full-precision fine-tune /models/acme-support-70b-v3 exported from the training cluster.
job "llm-support-70b" {
  datacenters = ["dc-fra1"]
  type        = "service"

  group "vllm" {
    count = 1

    network {
      mode = "host"
      port "http" { static = 8000 }
    }

    volume "models" {
      type      = "host"
      source    = "models"
      read_only = true
    }

    restart {
      attempts = 2
      interval = "30m"
      delay    = "15s"
      mode     = "fail"
    }

    reschedule {
      attempts  = 0
      unlimited = false
    }

    task "server" {
      driver = "docker"

      config {
        image        = "vllm/vllm-openai:v0.26.2"
        network_mode = "host"
        ipc_mode     = "host"
        ports        = ["http"]
        args = [
          "--model", "/models/acme-support-70b-v3",
          "--served-model-name", "support-70b",
          "--tensor-parallel-size", "4",
          "--max-model-len", "16384",
          "--max-num-seqs", "128",
          "--gpu-memory-utilization", "0.92",
          "--enable-prefix-caching",
        ]
      }

      volume_mount {
        volume      = "models"
        destination = "/models"
      }

      env {
        HF_HUB_OFFLINE = "1"
        VLLM_LOGGING_LEVEL = "INFO"
      }

      resources {
        cpu    = 16000
        memory = 32768   # MiB, hard limit (no memory_max)

        device "nvidia/gpu" {
          count = 4
          constraint {
            attribute = "${device.model}"
            value     = "NVIDIA H100 80GB HBM3"
          }
        }
      }

      service {
        name     = "llm-support-70b"
        port     = "http"
        provider = "nomad"
        check {
          type     = "http"
          path     = "/health"
          interval = "15s"
          timeout  = "3s"
        }
      }
    }
  }
}
