package dev.fairway.lb;

/**
 * Told of a {@link LoadBalancer}'s membership and health: which targets joined, which left, which
 * changed state, and when it closed. Integrations hang per-target resources on it (lb-okhttp removes
 * a departed target's meters). Every method has a no-op default, so implement only what you need.
 *
 * <p>Methods are called on the thread that applied the change (the target source's, or the one
 * whose call outcome or pick made a health change due), after the change took effect and outside
 * the balancer's locks, one call at a time per balancer. They must not block; an exception they
 * throw is logged and does not stop the others.
 */
public interface LoadBalancerListener {
  /** {@code target} became a member (it may still be warming up or unhealthy). */
  default void targetAdded(Target target) {}

  /** {@code target} left the membership; its calls still in flight complete normally. */
  default void targetRemoved(Target target) {}

  /**
   * {@code target}'s state changed from {@code previous} to {@code current} (say, ejected by passive
   * health, or back after its ejection); {@code reason} says why, for a log line.
   */
  default void healthChanged(Target target, TargetState previous, TargetState current, String reason) {}

  /** The balancer closed: every target it had is gone, and no other call follows. */
  default void closed() {}
}
