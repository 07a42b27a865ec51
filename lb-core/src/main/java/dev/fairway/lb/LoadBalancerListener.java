package dev.fairway.lb;

/**
 * Told of a {@link LoadBalancer}'s membership: which targets joined, which left, and when it closed.
 * Integrations hang per-target resources on it (lb-okhttp removes a departed target's meters).
 * Every method has a no-op default, so implement only what you need.
 *
 * <p>Methods are called on the thread that applied the change (the target source's), after the
 * change took effect and outside the balancer's locks, one call at a time per balancer. They must
 * not block; an exception they throw is logged and does not stop the others.
 */
public interface LoadBalancerListener {
  /** {@code target} became a member (it may still be warming up or unhealthy). */
  default void targetAdded(Target target) {}

  /** {@code target} left the membership; its calls still in flight complete normally. */
  default void targetRemoved(Target target) {}

  /** The balancer closed: every target it had is gone, and no other call follows. */
  default void closed() {}
}
