"""Running many independent items (recordings, robots, simulated cases) on local worker
processes or a Ray cluster, and the summary table of a batch (no ROS)."""
from sysid_ros._src.batch.executor import BatchError, Outcome, check_executor, local_ray_head, \
    run_tasks

__all__ = ["BatchError", "Outcome", "check_executor", "local_ray_head", "run_tasks"]
