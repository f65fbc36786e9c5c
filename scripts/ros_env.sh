# Sourced by the entry scripts: DDS stays on this machine and each run gets a domain id of its
# own (parallel runs do not cross-talk), with the middleware the wheels ship.
export ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST
export ROS_DOMAIN_ID=${ROS_DOMAIN_ID:-$(( ($$ % 80) + 20 ))}
export RMW_IMPLEMENTATION=rmw_fastrtps_cpp
# Fast DDS profile: deep shared-memory queues, UDP on loopback only (config/fastdds.xml says why)
export FASTRTPS_DEFAULT_PROFILES_FILE=${FASTRTPS_DEFAULT_PROFILES_FILE:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/config/fastdds.xml}
