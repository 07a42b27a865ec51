package dev.fairway.lb;

/**
 * One call's hold on one target, returned by {@link LoadBalancer#pick}. The hold counts as one
 * in-flight call on the target until it is completed with {@link #success()}, {@link #failure},
 * {@link #release()} or {@link #close()}. Only the first completion counts; later ones are ignored,
 * so completing from a {@code finally} block after an earlier completion is safe.
 *
 * <p>A hold that is never completed keeps its slot for good: the target looks busier than it is to
 * every load-aware strategy, and a concurrency-limited one may stop sending it calls. The
 * integrations (the OkHttp interceptor, the Spring Boot starter) complete every pick themselves. A
 * hand-written client should take the pick in a try-with-resources statement, so that an exception
 * or an early return cannot forget it; {@link #close()} then frees the slot only if nothing
 * completed the pick, and does nothing after {@link #success()} or {@link #failure}:
 *
 * <pre>{@code
 * try (Pick pick = balancer.pick()) {
 *   HttpResponse<String> response = http.send(request(pick.target()), BodyHandlers.ofString());
 *   if (response.statusCode() >= 500) {
 *     pick.failure(new IOException("HTTP " + response.statusCode() + " from " + pick.target().id()));
 *   } else {
 *     pick.success();
 *   }
 *   return response.body();
 * } // an exception from send() (or a return before the outcome) only frees the slot
 * }</pre>
 *
 * A failure of the call itself (a refused connection, say) is worth reporting with {@link #failure}
 * before it leaves the block, so that passive health hears of it; a bare {@code close()} counts it
 * as neither success nor failure.
 *
 * <p>Thread-safe: a pick may be completed from any thread.
 */
public interface Pick extends AutoCloseable {

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
   * that were on it move to another target on their next pick. A cause that says the calling thread
   * was interrupted (an {@link InterruptedException}, or an {@link java.io.InterruptedIOException}
   * such as Okio's "interrupted", anywhere in its cause chain; a timeout is not one) is no failure
   * of the target: the pick is {@linkplain #release() released} instead.
   */
  void failure(Throwable cause);

  /** The call was cancelled or abandoned: frees the in-flight slot and records nothing else. */
  void release();

  /**
   * Ends the hold if nothing else did: as {@link #release()} when the pick was not completed, and
   * nothing after {@link #success()}, {@link #failure}, {@link #release()} or {@link #superseded()}
   * (only the first completion counts). After {@link #supersededHoldingSlot()} it frees the slot
   * that call kept. For try-with-resources (see the class documentation); throws nothing. Calling it
   * more than once is safe.
   */
  @Override
  default void close() {
    release();
  }

  /**
   * Another copy of this call (a hedge) answered first and this one was cancelled: frees the
   * in-flight slot, and the time this copy ran, from the pick until now, counts as a lower bound of
   * the target's latency. It raises the latency average if the average (as decayed now) is below
   * it, and otherwise changes nothing; it is neither a success nor a failure for passive health.
   * Without it, a target whose slow calls are all won by hedges never gets a slow sample, its
   * average decays, and latency-scoring strategies send it more calls. Does nothing after a
   * completion.
   */
  default void superseded() {
    release();
  }

  /**
   * As {@link #superseded()}, but the in-flight slot stays held until {@link #release()}: for a copy
   * cancelled on this side while its target most likely still works on it, so that the target's
   * load still counts it. The lower bound is the time from the pick until now, not until the
   * release. Does nothing after a completion.
   */
  default void supersededHoldingSlot() {}

  /**
   * Records the call's latency now (say, when the response headers arrive) while keeping the hold,
   * so a streaming body still counts as load. A later {@link #success()} keeps this latency. Does
   * nothing after a completion.
   */
  default void recordLatency() {}

  /**
   * Hands the balancer a load report that the target sent with this call's response (say, ORCA's
   * {@code endpoint-load-metrics} header, which the OkHttp interceptor reads for you). The report is
   * kept on the target until a newer one replaces it, and is used for 5 seconds after it arrived: a
   * per-request snapshot of a queue is worth little after that, and the target's load is then again
   * what this balancer measures itself. Least connections and power of two choices count a fresh
   * report's calls from every client as far as the target's reports have agreed with what this
   * balancer sees of its own calls there, instead of this balancer's own count alone; the other
   * strategies, least queueing included, do not read reports. Call it before {@link #success()} or {@link #failure}; it does
   * nothing after a completion. Allocation-free and lock-free; thread-safe.
   *
   * @param utilization how busy the target is, as ORCA's {@code application_utilization}: 1.0 means
   *     every worker busy, above 1.0 a queue; {@code NaN}, negative or infinite when not known (then
   *     it is not kept)
   * @param requestsInFlight calls in flight at the target from every client, queued or in service,
   *     as the target counted them when it answered (ORCA's {@code named_metrics.rif}); {@code NaN},
   *     negative or infinite when not known (then it is not kept)
   */
  default void reportLoad(double utilization, double requestsInFlight) {}
}
