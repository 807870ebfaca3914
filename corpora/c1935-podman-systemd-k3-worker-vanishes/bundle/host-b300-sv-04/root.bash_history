#1796674443
podman ps -a
#1796674480
systemctl cat kimi-k3
#1796674562
journalctl -u kimi-k3 --since -1h | grep -c 'Engine 000'
#1796674897
dcgmi diag -r 1
#1796742131
nvidia-smi -q -d ECC | grep -i -A3 volatile
#1796742290
podman image ls | grep kimi
#1796742382
curl -s localhost:8000/v1/models | jq .
#1796826790
nvidia-smi
#1796826835
nvidia-smi --query-compute-apps=pid,process_name,gpu_bus_id,used_memory --format=csv
#1796826871
ps -o pid,user,lstart,etime,cmd -p 2471763
#1796826902
loginctl list-sessions
#1796826950
ls -la /home/jdoe/notebooks | tail
#1796827001
journalctl -k --since today | grep -i xid
#1796827099
who
#1796827258
nvidia-smi
#1796827291
nvidia-smi > /tmp/gpu5-before.txt
#1796827330
kill -9 2417763
#1796827338
nvidia-smi
#1796827356
systemctl status kimi-k3 --no-pager
#1796827402
journalctl -u kimi-k3 -n 80 --no-pager
#1796827661
nvidia-smi > /tmp/gpu5-after.txt
#1796827745
journalctl -u kimi-k3 --since today -o short-iso > /tmp/kimi-k3-journal.txt
