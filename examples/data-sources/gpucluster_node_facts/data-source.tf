data "gpucluster_node_facts" "gpu01" {
  node = "gpu01"
}

# The values for a Slurm NodeName line, as `slurmd -C` reports them.
output "gpu01_node_line" {
  value = format("NodeName=gpu01 CPUs=%d Boards=%d SocketsPerBoard=%d CoresPerSocket=%d ThreadsPerCore=%d RealMemory=%d Gres=gpu:%d",
    data.gpucluster_node_facts.gpu01.cpus,
    data.gpucluster_node_facts.gpu01.boards,
    data.gpucluster_node_facts.gpu01.sockets_per_board,
    data.gpucluster_node_facts.gpu01.cores_per_socket,
    data.gpucluster_node_facts.gpu01.threads_per_core,
    data.gpucluster_node_facts.gpu01.real_memory,
  data.gpucluster_node_facts.gpu01.gpu_count)
}
