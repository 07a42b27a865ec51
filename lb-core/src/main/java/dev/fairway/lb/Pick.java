package dev.fairway.lb;

/**
 * One call's hold on one target, returned by {@link LoadBalancer#pick}. The hold counts as one
 * in-flight call on the target until it is completed with {@link #success()}, {@link #failure} or
 * {@link #release()}. Only the first completion counts; later ones are ignored, so completing from
 * a {@code finally} block after an earlier completion is safe.
 *
 * <p>Thread-safe: a pick may be completed from any thread.
 */
public interface Pick {

  /** The target chosen for this call. */
  Target target();

  /**
   * The call succeeded. Its latency (from the pick, or from {@link #recordLatency()} if that was
   * called) feeds the target's latency average, and passive health counts a success.
   */
  void success();

  /**
   * The call failed. Passive health counts a failure (a {@link java.net.ConnectException} ejects
   * the target at once), and every affinity entry that points at this target is dropped, so keys
   * that were on it move to another target on their next pick.
   */
  void failure(Throwable cause);

  /** The call was cancelled or abandoned: frees the in-flight slot and records nothing else. */
  void release();

  /**
   * Records the call's latency now (say, when the response headers arrive) while keeping the hold,
   * so a streaming body still counts as load. A later {@link #success()} keeps this latency. Does
   * nothing after a completion.
   */
  default void recordLatency() {}
}
