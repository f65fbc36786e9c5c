"""Sound enclosures shared by the controller's bounds and the planner's reachability: interval
and affine arithmetic, the serial chain's interval kinematics (RNEA), mass-matrix enclosures over
joint boxes and the trunk-motion torque of a standing base. No rclpy here."""
