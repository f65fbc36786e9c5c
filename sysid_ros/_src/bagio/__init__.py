"""rosbag2 input/output without rclpy (pure ``rosbags``): a crash-tolerant chunked writer and
validated offline readers of JointState/Imu topics. Errors are :class:`BagError` subclasses."""
from __future__ import annotations

from .errors import (
    ArrayLengthError,
    BagCorruptError,
    BagError,
    BagNotFoundError,
    BagWriteError,
    DuplicateStampError,
    EmptyTopicError,
    MissingJointError,
    NonFiniteValueError,
    NonMonotonicStampError,
    PlaybackError,
    StampOrderError,
    TopicNotFoundError,
    TopicTypeError,
)
from .playback import ClockThrottle, PlaybackOptions, PlaybackStats, Player
from .reader import (
    ImuSeries,
    JointStateSeries,
    ProgressCallback,
    iter_joint_states,
    iter_messages,
    list_topics,
    open_bag,
    read_imu,
    read_joint_states,
)
from sysid_ros._src.sample_screen import SKIP_KINDS, SkipLog

from .writer import STORAGES, BagWriter, default_typestore, write_joint_state_arrays

__all__ = [
    "SKIP_KINDS",
    "SkipLog",
    "ArrayLengthError",
    "BagCorruptError",
    "BagError",
    "BagNotFoundError",
    "BagWriteError",
    "BagWriter",
    "ClockThrottle",
    "DuplicateStampError",
    "EmptyTopicError",
    "ImuSeries",
    "JointStateSeries",
    "MissingJointError",
    "NonFiniteValueError",
    "NonMonotonicStampError",
    "PlaybackError",
    "PlaybackOptions",
    "PlaybackStats",
    "Player",
    "ProgressCallback",
    "STORAGES",
    "write_joint_state_arrays",
    "StampOrderError",
    "TopicNotFoundError",
    "TopicTypeError",
    "default_typestore",
    "iter_joint_states",
    "iter_messages",
    "list_topics",
    "open_bag",
    "read_imu",
    "read_joint_states",
]
