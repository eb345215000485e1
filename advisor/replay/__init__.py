"""What-if replay: a capture's workload under the kernel policies before and after each fix."""
