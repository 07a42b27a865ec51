package dev.fairway.lb.hc5;

import dev.fairway.lb.HedgingPolicy;
import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.internal.Args;
import dev.fairway.lb.internal.OutcomeRule;
import dev.fairway.lb.internal.RetryRule;
import dev.fairway.lb.internal.hedging.Hedger;
import io.github.resilience4j.core.IntervalFunction;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Executor;
import java.util.function.LongSupplier;
import org.apache.hc.client5.http.HttpRequestRetryStrategy;
import org.apache.hc.client5.http.impl.ChainElement;
import org.apache.hc.client5.http.impl.DefaultHttpRequestRetryStrategy;
import org.apache.hc.client5.http.impl.async.HttpAsyncClientBuilder;
import org.apache.hc.client5.http.impl.classic.HttpClientBuilder;
import org.apache.hc.core5.net.Host;
import org.jspecify.annotations.Nullable;

/**
 * Balances the requests of an Apache HttpClient 5 client, classic ({@link
 * org.apache.hc.client5.http.impl.classic.CloseableHttpClient}) or async ({@link
 * #customize(HttpAsyncClientBuilder)}), to logical hosts across the targets
 * of a {@link LoadBalancer}, retries on another target when that is safe, and reports every outcome
 * back to the balancer.
 *
 * <pre>{@code
 * LoadBalancer orders = LoadBalancer.builder("orders")
 *     .targets(Target.of("10.0.0.1", 8080), Target.of("10.0.0.2", 8080))
 *     .build();
 * FairwayHttpClient5 fairway = FairwayHttpClient5.builder().service("orders", orders).build();
 * try (CloseableHttpClient client = fairway.customize(HttpClients.custom()).build()) {
 *   String body = client.execute(new HttpGet("http://orders/api/orders/42"),
 *       response -> EntityUtils.toString(response.getEntity()));
 * }
 * }</pre>
 *
 * <h2>Where it sits in HttpClient's exec chain</h2>
 *
 * HttpClient plans a request's route before its exec chain runs and hands it down in the chain's
 * {@code Scope}; its {@code CONNECT} element opens the connection to that route, and {@code
 * MAIN_TRANSPORT} only sends over the connection it was given. A route set before {@code
 * MAIN_TRANSPORT} would come too late: {@link #customize} adds Fairway's handler just before
 * {@code PROTOCOL} (an element every client has), so that each attempt passes a new scope with the
 * picked target's route to {@code PROTOCOL} and {@code CONNECT}. The chain then reads: {@code
 * REDIRECT}, {@code RETRY}, {@code COMPRESS}, Fairway, {@code PROTOCOL}, {@code CONNECT}, {@code
 * MAIN_TRANSPORT}. So every redirect is balanced anew (relative locations resolve against the
 * logical URI), and responses are decompressed above Fairway.
 *
 * <h2>HttpClient's own retries</h2>
 *
 * HttpClient's {@code RETRY} element sits outside Fairway's handler: it would send the whole
 * balanced exchange again, and its default strategy ({@link DefaultHttpRequestRetryStrategy})
 * retries idempotent requests after some I/O errors and any request answered 429 or 503, after a
 * second's wait, so one call could reach up to twice {@link Builder#maxAttempts} targets. {@link
 * #customize} therefore also sets the builder's retry strategy to one that never retries an
 * exchange Fairway balanced (Fairway retries it, on another target, within its budget) and asks
 * {@link DefaultHttpRequestRetryStrategy} (or the strategy given to {@link
 * #customize(HttpClientBuilder, HttpRequestRetryStrategy)}) about every other request. Set no retry
 * strategy on the builder after {@code customize}: it would replace this one.
 *
 * <h2>Pooled connections the server closed (classic client)</h2>
 *
 * HttpClient's pool checks an idle connection before it reuses it only after {@code
 * validateAfterInactivity} (2 s by default), and many servers close idle keep-alive connections
 * sooner (nginx's {@code keepalive_timeout}): a request written on such a connection gets no
 * response ({@code NoHttpResponseException}), and a POST must not be sent again. A plain client
 * sends a host's calls over that host's freshest connection; Fairway splits them over several
 * targets, and its balancer now and then sends to a target it has not used for a while, so
 * Fairway's connections sit idle longer than the plain client's. So {@link #customize} also sets
 * the builder's request executor to one that, for a balanced request on a connection idle for 1 s
 * or more, first runs HttpClient's stale check (a read of at most 1 ms) and, if the server closed
 * the connection, drops it and sends the request on another connection of the same target: nothing
 * was written, so this holds for every method, costs no attempt and charges no target. A server
 * closing a connection at the very moment a request goes out on it is still a failure, as for the
 * plain client. Requests Fairway does not balance go out unchecked. Set no request executor on the
 * builder after {@code customize}: it would replace this one.
 *
 * <h2>What it does to a request</h2>
 *
 * <ul>
 *   <li>A request whose host equals a registered logical host (case-insensitive) goes to the picked
 *       target's host and port, with the {@code Host} header the target's authority; scheme, path,
 *       query, headers and body are kept. Requests to any other host pass through untouched.
 *   <li>Outcomes: an I/O error, and a protocol error such as a garbage status line, are failures of
 *       the target; a status in {@link Builder#failureStatusCodes} (default 500, 502, 503, 504) is a
 *       failure too, but the response is still returned when no retry applies. Each response's
 *       {@code endpoint-load-metrics} header reaches the balancer. The target's in-flight slot is
 *       held until the response entity is read to its end or closed (or the response is closed),
 *       never released at headers time; latency is recorded when the headers arrive.
 *   <li>A request aborted with {@code cancel()} (which is how a caller's deadline ends a classic
 *       request), a thread interrupted before or during the call, and a connection lease that timed
 *       out in the client's own pool only free the slot: they count against no target and are never
 *       retried. A response timeout is the target's failure (it did not answer in time).
 *   <li>Retries follow the rules every Fairway integration shares: a connection that could not be
 *       made is retried on another target for every method; after a possible send, and after a
 *       retryable status (default 502, 503, 504), only an idempotent request with a repeatable
 *       entity is. At most {@link Builder#maxAttempts} attempts, each on a target this call has not
 *       tried while one remains, then rounds over all of them after {@link Builder#backoff}; within
 *       a retry budget per service ({@link Builder#retryBudget}, default 20% plus 10 a second).
 *   <li>A small response entity (up to {@link Builder#bufferBodiesUpTo}, default 64 KiB, with a
 *       known length) of a request that could still be retried is read before the call returns, so
 *       a connection lost mid-body is retried too; larger ones stream.
 * </ul>
 *
 * <h2>Hedging</h2>
 *
 * With {@link Builder#hedging}, the classic and the async client send a hedge, a second copy of a request to
 * another target, when the first has no response after the policy's delay (lb-core's {@link
 * HedgingPolicy}, with the same decisions as lb-okhttp's: per-target delay, budgets, the judge of
 * free workers, held losers). Each copy runs on a runtime of its own ({@code
 * AsyncExecRuntime.fork()}, its own connection) with its own cancellation: the first copy with a
 * usable response (not a failure status) wins and goes to the caller; the other is cancelled and
 * its connection closed, and its slot is held as the policy says. A failure status from one copy
 * does not win while the other may still answer; when neither wins, the copy that failed last is
 * the one the caller gets (the first failure status's body was discarded), and the exchange's
 * retry rules then apply to it, the hedge counted as an attempt on a target the request tried.
 * Cancelling the caller's future (classic: the request's {@code cancel()}) cancels both copies
 * and charges neither target.
 *
 * <p>Hedged: a GET, HEAD or OPTIONS without a request entity (lb-core's rule for a second copy in
 * flight). A request with an entity is never hedged, whatever its method: one entity producer
 * cannot feed two exchanges at once. At most one hedge per request, for its first attempt.
 *
 * <p>The classic client's threads: the first copy runs on the caller's thread (its runtime
 * forked with {@code ExecRuntime.fork(CancellableDependency)}), the hedge on a thread of the shared
 * hedge pool, which blocks in it until its headers come. When the hedge wins while the caller's
 * thread still reads the first copy, that copy is cancelled (its connection closed) and the
 * caller's thread returns the hedge's response. An interrupt of the caller's thread ends both
 * copies once that thread sees it: at once while it waits for the hedge, else when its blocking
 * read of the first copy returns. The winner's connection goes back to the pool when the response
 * is consumed or closed; the loser's is closed.
 *
 * <p>Immutable and thread-safe: one instance can customize any number of builders.
 */
public final class FairwayHttpClient5 {
  /** The name of Fairway's element in HttpClient's exec chain. */
  public static final String EXEC_NAME = "fairway";

  private final BalancingExecHandler handler;
  private final BalancingAsyncExecHandler asyncHandler;

  private final @Nullable Hedger hedger; // null: no hedging
  private final IdleConnectionCheck idleCheck;

  private FairwayHttpClient5(Builder b) {
    HedgingPolicy policy = b.hedging;
    Hedger.Scheduler scheduler = b.hedgeScheduler;
    Executor executor = b.hedgeExecutor;
    this.hedger = policy == null ? null
        : scheduler != null && executor != null
            ? new Hedger(policy, scheduler, executor, b.ticker)
            : Hedger.create(policy, b.ticker);
    Map<String, ServiceRoute> routes = new HashMap<>();
    for (Map.Entry<String, LoadBalancer> e : b.services.entrySet()) {
      routes.put(e.getKey(), new ServiceRoute(e.getKey(), e.getValue(),
          b.percentCanRetry(), b.minRetriesPerSecond(), b.ticker, b.failureStatusCodes(), hedger));
    }
    RetryRule retries = new RetryRule(b.maxAttempts(), b.retryStatusCodes(), b.backoff());
    this.handler = new BalancingExecHandler(routes, retries, b.bufferBodiesUpTo(), b.sleeper, b.affinityKey);
    this.asyncHandler = new BalancingAsyncExecHandler(handler);
    this.idleCheck = new IdleConnectionCheck(b.ticker);
  }

  public static Builder builder() {
    return new Builder();
  }

  /**
   * Adds Fairway's handler to {@code builder}'s exec chain (before {@code PROTOCOL}), sets its
   * retry strategy to one that leaves the exchanges Fairway balances to Fairway and asks {@link
   * DefaultHttpRequestRetryStrategy#INSTANCE} about every other request, and sets its request
   * executor to one that checks a balanced request's pooled connection after 1 s idle (see the
   * class documentation). Returns {@code builder}.
   */
  public HttpClientBuilder customize(HttpClientBuilder builder) {
    return customize(builder, DefaultHttpRequestRetryStrategy.INSTANCE);
  }

  /**
   * As {@link #customize(HttpClientBuilder)}, with {@code otherRequests} deciding HttpClient's
   * retries of the requests Fairway does not balance.
   */
  public HttpClientBuilder customize(HttpClientBuilder builder, HttpRequestRetryStrategy otherRequests) {
    Args.requireArgument(builder != null, "builder", null, "an HttpClientBuilder");
    Args.requireArgument(otherRequests != null, "otherRequests", null, "an HttpRequestRetryStrategy");
    return builder
        .addExecInterceptorBefore(ChainElement.PROTOCOL.name(), EXEC_NAME, handler)
        .setRetryStrategy(new BalancedRetryStrategy(otherRequests))
        .setRequestExecutor(idleCheck);
  }

  /**
   * Adds Fairway's handler to an async client's exec chain (before {@code PROTOCOL}, as for the
   * classic client) and sets its retry strategy as {@link #customize(HttpClientBuilder)} does.
   * Returns {@code builder}.
   *
   * <p>The async client follows the same rules, with two differences: a retryable status is retried
   * only when an untried target can be picked at once (else the response goes to the caller, as no
   * backoff round follows a status), and a request whose entity producer is not repeatable is never
   * retried. A target's slot is held until the caller's consumer has taken the whole response, and
   * a cancelled future frees it without charging the target. With {@link Builder#hedging}, a
   * hedgeable request's first attempt may get a hedge (see the class documentation).
   */
  public HttpAsyncClientBuilder customize(HttpAsyncClientBuilder builder) {
    return customize(builder, DefaultHttpRequestRetryStrategy.INSTANCE);
  }

  /**
   * As {@link #customize(HttpAsyncClientBuilder)}, with {@code otherRequests} deciding HttpClient's
   * retries of the requests Fairway does not balance.
   */
  public HttpAsyncClientBuilder customize(HttpAsyncClientBuilder builder, HttpRequestRetryStrategy otherRequests) {
    Args.requireArgument(builder != null, "builder", null, "an HttpAsyncClientBuilder");
    Args.requireArgument(otherRequests != null, "otherRequests", null, "an HttpRequestRetryStrategy");
    return builder
        .addExecInterceptorBefore(ChainElement.PROTOCOL.name(), EXEC_NAME, asyncHandler)
        .setRetryStrategy(new BalancedRetryStrategy(otherRequests));
  }

  /** The handler; for tests. */
  BalancingExecHandler handler() {
    return handler;
  }

  @Override
  public String toString() {
    Hedger h = hedger;
    return "FairwayHttpClient5{services=" + handler.hosts() + ", maxAttempts=" + handler.retries().maxAttempts()
        + (h != null ? ", hedging=" + h.policy : "") + "}";
  }

  /**
   * Configures a {@link FairwayHttpClient5}. Each setter validates its argument and may be called
   * once (except {@link #service}, once per logical host): a second call throws {@link
   * IllegalStateException}, a bad value {@link IllegalArgumentException} naming field and value.
   * Not thread-safe.
   */
  public static final class Builder {
    private static final int[] DEFAULT_FAILURE_STATUS_CODES = OutcomeRule.defaultFailureStatusCodes();
    private static final int[] DEFAULT_RETRY_STATUS_CODES = {502, 503, 504};

    private final Map<String, LoadBalancer> services = new HashMap<>();
    // Unset (null) until its setter is called; the getters below apply the defaults.
    private @Nullable Integer maxAttempts;
    private @Nullable List<Integer> failureStatusCodes;
    private @Nullable List<Integer> retryStatusCodes;
    private @Nullable List<Number> retryBudget; // percentCanRetry, minRetriesPerSecond
    private @Nullable IntervalFunction backoff;
    private @Nullable Long bufferBodiesUpTo;
    private @Nullable AffinityKey affinityKey;
    private @Nullable HedgingPolicy hedging;
    Hedger.@Nullable Scheduler hedgeScheduler;
    @Nullable Executor hedgeExecutor;
    LongSupplier ticker = System::nanoTime;
    Sleeper sleeper = Sleeper.ABORTABLE;

    private Builder() {}

    /**
     * Balances requests whose host equals {@code logicalHost} (case-insensitive; the request's port
     * is replaced by the target's) across {@code loadBalancer}'s targets.
     */
    public Builder service(String logicalHost, LoadBalancer loadBalancer) {
      String host = logicalHost == null ? "" : logicalHost.trim().toLowerCase(Locale.ROOT);
      if (!isHostName(host)) {
        throw Args.invalid("logicalHost", logicalHost, "a host name such as \"orders\"");
      }
      Args.requireArgument(loadBalancer != null, "loadBalancer", null, "the LoadBalancer of " + Args.quote(logicalHost));
      Args.requireUnset("service " + Args.quote(host), services.get(host));
      services.put(host, loadBalancer);
      return this;
    }

    /** Attempts per call, each on a distinct target while untried ones remain. 1 = no retry. Default 3. */
    public Builder maxAttempts(int attempts) {
      Args.requireUnset("maxAttempts", maxAttempts);
      Args.requireArgument(attempts >= 1 && attempts <= 10, "maxAttempts", attempts, "1..10");
      this.maxAttempts = attempts;
      return this;
    }

    /** Statuses reported to the balancer as failures (the response still reaches the caller). Default 500, 502, 503, 504. */
    public Builder failureStatusCodes(int... codes) {
      Args.requireUnset("failureStatusCodes", failureStatusCodes);
      this.failureStatusCodes = checkCodes("failureStatusCodes", codes);
      return this;
    }

    /**
     * Failure statuses after which an idempotent request is retried on another target. Each must also
     * be a failure status. Default 502, 503, 504.
     */
    public Builder retryStatusCodes(int... codes) {
      Args.requireUnset("retryStatusCodes", retryStatusCodes);
      this.retryStatusCodes = checkCodes("retryStatusCodes", codes);
      return this;
    }

    /**
     * Retries per service may add at most {@code percentCanRetry} (0.0..10.0; 0.2 = 20%) to the
     * request rate, plus {@code minRetriesPerSecond} (0..10000) so low traffic can retry too, both
     * over a 10-second window. Default 0.2 and 10.
     */
    public Builder retryBudget(double percentCanRetry, int minRetriesPerSecond) {
      Args.requireUnset("retryBudget", retryBudget);
      Args.requireArgument(percentCanRetry >= 0.0 && percentCanRetry <= 10.0, "percentCanRetry", percentCanRetry, "0.0..10.0");
      Args.requireArgument(minRetriesPerSecond >= 0 && minRetriesPerSecond <= 10_000,
          "minRetriesPerSecond", minRetriesPerSecond, "0..10000");
      this.retryBudget = List.of(percentCanRetry, minRetriesPerSecond);
      return this;
    }

    /**
     * The wait before round {@code n} (1, 2, ...) of attempts once this call tried every target, in
     * milliseconds. Default: exponential from 50 ms, factor 2, randomized by 50%, at most 1 s.
     */
    public Builder backoff(IntervalFunction backoff) {
      Args.requireUnset("backoff", this.backoff);
      Args.requireArgument(backoff != null, "backoff", null, "an IntervalFunction");
      this.backoff = backoff;
      return this;
    }

    /**
     * A response to a request that could still be retried, with a {@code Content-Length} of at most
     * {@code maxBytes}, is read into memory before the call returns, so a connection lost mid-body
     * is retried on another target rather than failing the caller's read. Larger and chunked bodies
     * stream as usual. 0 turns this off; at most 16 MiB. Default 64 KiB.
     */
    public Builder bufferBodiesUpTo(long maxBytes) {
      Args.requireUnset("bufferBodiesUpTo", bufferBodiesUpTo);
      Args.requireArgument(maxBytes >= 0 && maxBytes <= 16L * 1024 * 1024, "bufferBodiesUpTo", maxBytes, "0..16777216");
      this.bufferBodiesUpTo = maxBytes;
      return this;
    }

    /**
     * How to find a request's affinity key, given to every pick of its exchange (the first attempt
     * and each retry, which still avoids the targets the exchange tried), for the classic and the
     * async client. Default: none (every pick without a key).
     */
    public Builder affinityKey(AffinityKey key) {
      Args.requireUnset("affinityKey", affinityKey);
      Args.requireArgument(key != null, "affinityKey", null, "an AffinityKey");
      this.affinityKey = key;
      return this;
    }

    /**
     * Sends a hedge, a second copy of a request to another target, when the first copy has no
     * response after {@code policy}'s delay; the first usable response wins and the other copy is
     * cancelled. The same policy and decisions as lb-okhttp's: a hedge goes only to a target that
     * may have a free worker, takes a token from the policy's own budget ({@link
     * HedgingPolicy#withBudget}) and one from the retry budget ({@link #retryBudget}), and a
     * losing copy keeps its slot for a while ({@link HedgingPolicy#withLoserHold}). Hedged: GET,
     * HEAD and OPTIONS requests without an entity, on the classic and the async client (see the
     * class documentation for their threads). At most one hedge per request, for its first
     * attempt; it counts as an attempt toward {@link #maxAttempts}. Default: no hedging.
     *
     * @throws IllegalStateException if hedging was set already
     */
    public Builder hedging(HedgingPolicy policy) {
      Args.requireUnset("hedging", hedging);
      Args.requireArgument(policy != null, "hedging", null, "a HedgingPolicy");
      this.hedging = policy;
      return this;
    }

    /** How hedges are timed and where they are sent from. For tests. */
    Builder hedgeScheduler(Hedger.Scheduler scheduler, Executor executor) {
      this.hedgeScheduler = scheduler;
      this.hedgeExecutor = executor;
      return this;
    }

    /** The retry budget's (and hedging's) clock. For tests. */
    Builder ticker(LongSupplier ticker) {
      this.ticker = ticker;
      return this;
    }

    /** How backoffs wait. For tests. */
    Builder sleeper(Sleeper sleeper) {
      this.sleeper = sleeper;
      return this;
    }

    /**
     * A new {@link FairwayHttpClient5}; the builder is left as it was.
     *
     * @throws IllegalArgumentException naming the field if no service is registered or options conflict
     */
    public FairwayHttpClient5 build() {
      Args.requireArgument(!services.isEmpty(), "services", "none", "at least one service(logicalHost, loadBalancer)");
      for (int code : retryStatusCodes()) {
        Args.requireArgument(contains(failureStatusCodes(), code), "retryStatusCodes", code,
            "each also in failureStatusCodes " + Arrays.toString(failureStatusCodes()));
      }
      return new FairwayHttpClient5(this);
    }

    // Defaults live in these getters, so build() never changes the builder.

    private int maxAttempts() {
      return maxAttempts != null ? maxAttempts : 3;
    }

    private int[] failureStatusCodes() {
      return failureStatusCodes != null ? toArray(failureStatusCodes) : DEFAULT_FAILURE_STATUS_CODES.clone();
    }

    private int[] retryStatusCodes() {
      return retryStatusCodes != null ? toArray(retryStatusCodes) : DEFAULT_RETRY_STATUS_CODES.clone();
    }

    private double percentCanRetry() {
      return retryBudget != null ? retryBudget.get(0).doubleValue() : 0.2;
    }

    private int minRetriesPerSecond() {
      return retryBudget != null ? retryBudget.get(1).intValue() : 10;
    }

    private long bufferBodiesUpTo() {
      return bufferBodiesUpTo != null ? bufferBodiesUpTo : 64 * 1024;
    }

    private IntervalFunction backoff() {
      return backoff != null
          ? backoff
          : IntervalFunction.ofExponentialRandomBackoff(Duration.ofMillis(50), 2.0, 0.5, Duration.ofSeconds(1));
    }

    /** A host name or IP literal HttpClient accepts as a request's host, without a port. */
    private static boolean isHostName(String host) {
      if (host.isEmpty() || host.indexOf(':') >= 0 || host.indexOf('/') >= 0 || host.indexOf('@') >= 0) {
        return false;
      }
      try {
        return Host.create(host + ":80").getHostName().equals(host);
      } catch (java.net.URISyntaxException | IllegalArgumentException e) {
        return false;
      }
    }

    private static List<Integer> checkCodes(String field, int[] codes) {
      Args.requireArgument(codes != null, field, null, "HTTP status codes, possibly none");
      List<Integer> checked = new ArrayList<>(codes.length);
      for (int code : codes) {
        Args.requireArgument(code >= 100 && code <= 599, field, code, "100..599");
        checked.add(code);
      }
      return List.copyOf(checked);
    }

    private static int[] toArray(List<Integer> codes) {
      return codes.stream().mapToInt(Integer::intValue).toArray();
    }

    private static boolean contains(int[] codes, int code) {
      for (int c : codes) {
        if (c == code) {
          return true;
        }
      }
      return false;
    }
  }
}
