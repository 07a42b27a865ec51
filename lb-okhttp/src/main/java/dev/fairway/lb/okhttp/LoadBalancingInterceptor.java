package dev.fairway.lb.okhttp;

import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.internal.Args;
import dev.fairway.lb.internal.AttemptBudget;
import dev.fairway.lb.internal.OutcomeRule;
import dev.fairway.lb.internal.RetryRule;
import dev.fairway.lb.internal.hedging.Hedger;
import io.github.resilience4j.core.IntervalFunction;
import io.micrometer.observation.ObservationRegistry;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executor;
import java.util.function.LongSupplier;
import okhttp3.HttpUrl;
import okhttp3.Interceptor;
import okhttp3.Response;
import org.jspecify.annotations.Nullable;

/**
 * An OkHttp <em>application</em> interceptor that balances calls to logical hosts across the targets
 * of a {@link LoadBalancer}, retries on another target when that is safe, and reports every outcome
 * back to the balancer.
 *
 * <pre>{@code
 * LoadBalancer orders = LoadBalancer.builder("orders")
 *     .targets(Target.of("10.0.0.1", 8080), Target.of("10.0.0.2", 8080))
 *     .build();
 * OkHttpClient client = new OkHttpClient.Builder()
 *     .addInterceptor(LoadBalancingInterceptor.builder().service("orders", orders).build())
 *     .build();
 * client.newCall(new Request.Builder().url("http://orders/api/orders/42").build()).execute();
 * }</pre>
 *
 * <h2>What it does to a call</h2>
 *
 * <ul>
 *   <li>A request whose URL host equals a registered logical host (compared case-insensitively) gets
 *       the picked target's host and port; scheme, path, query, headers and body are kept. The
 *       {@code Host} header becomes the target's authority unless {@link
 *       Builder#keepLogicalHostHeader(boolean)} is set. Requests to any other host pass through
 *       untouched.
 *   <li>Outcomes: an {@link IOException} is a failure of the target; a status in {@link
 *       Builder#failureStatusCodes} (default 500, 502, 503, 504) is a failure too, but the response is
 *       still returned when no retry applies. The target's in-flight slot is held until the
 *       response body is fully read or closed; latency is recorded when the response headers
 *       arrive. A cancelled call only frees its slot. So does a call whose thread is interrupted
 *       (say by Resilience4j's {@code TimeLimiter} or {@code Future.cancel(true)}): it is cancelled,
 *       never retried or hedged, counts against no target, and throws {@link
 *       java.io.InterruptedIOException} with the thread's interrupt flag kept. An interrupt cannot
 *       end a blocking socket read, so it takes effect at the next step of the call (the hedge
 *       timer, a read, a retry); {@code Call.cancel()} ends the call at once.
 *   <li>Retries go to a target this call has not tried yet, at most {@link Builder#maxAttempts}
 *       attempts (distinct targets, not OkHttp's internal re-sends), decided by lb-core's one
 *       failure classification. A connection that could not be made (refused, no route, connect
 *       timeout, unknown host, a TLS handshake that failed before the certificate) is retried for
 *       every method: the request never left. A target whose host OkHttp will not put in a URL
 *       counts as such a failure of that target. A certificate the client rejects is not retried.
 *       An idempotent request (see {@link Idempotency}) is also retried after an I/O error once
 *       sent, and after a retryable status (default 502, 503, 504). Each attempt's outcome reaches
 *       passive health before the next attempt picks; a failed call throws its last failure with
 *       the earlier ones suppressed. Only once this call tried every target does a next round
 *       start, after {@link Builder#backoff}; the wait ends within 10 ms when the call is cancelled.
 *       Retries of one service are limited by a retry budget (default 20% of its request rate plus
 *       10 per second, as Finagle does). A retried response is closed before the next attempt.
 *   <li>A small body (up to {@link Builder#bufferBodiesUpTo}, default 64 KiB, with a known length)
 *       of a request that could still be retried is read before the call returns, so a connection
 *       lost mid-body is retried too; bigger bodies stream, and an error while reading them reaches
 *       the caller.
 *   <li>With {@link Builder#hedging}, a GET, HEAD or OPTIONS call (or one tagged {@link
 *       Idempotency#IDEMPOTENT}) that has no response after the policy's delay gets one hedge on
 *       another target; the first usable response wins and the other copy is cancelled, its pick
 *       held while its server presumably still works on it ({@link dev.fairway.lb.HedgingPolicy#withLoserHold}). Hedges have a budget of their own (default 5% of hedgeable calls), also
 *       take from the retry budget, and count as attempts.
 * </ul>
 *
 * <h2>OkHttp's own retryOnConnectionFailure</h2>
 *
 * OkHttp re-sends a request on a fresh connection to the <em>same</em> target when a pooled
 * connection turns out to be dead (say a server closed it as idle just as the request reused it),
 * for every method. The interceptor leaves that as the client configured it: a call through the
 * interceptor never fails where the same client without it would have succeeded. Such re-sends
 * happen inside one attempt; attempts count distinct targets, and only the retry on
 * <em>another</em> target after a possible send is reserved to idempotent requests.
 *
 * <p>Must be added with {@code OkHttpClient.Builder.addInterceptor}; as a network interceptor it
 * throws {@link IllegalStateException} on the first call, since OkHttp forbids network interceptors
 * to change the host and port.
 *
 * <p>Metrics go to the balancer's meter registry if it has one, and cost nothing otherwise:
 * {@code fairway.requests} (timer per attempt, from sending it until its body is consumed or closed;
 * tags {@code service}, {@code target}, {@code outcome} = {@code success}, {@code failure},
 * {@code cancelled} or {@code no_target}), {@code fairway.retries} (tags {@code service},
 * {@code reason} = {@code connect_failure}, {@code io_failure} or {@code status_<code>}),
 * {@code fairway.retry.budget.exhausted} (tag {@code service}), {@code fairway.hedges} (tags {@code
 * service}, {@code result} = {@code sent}, {@code won}, {@code budget_exhausted} or {@code no_capacity}) with the gauge
 * {@code fairway.hedges.extra.load} (hedges per call over the last 10 s), and {@code fairway.leaked.responses}
 * (tag {@code service}: response bodies garbage-collected unclosed, whose in-flight slot was then
 * freed; the first is logged). A target's meters are removed when it leaves the balancer, and all
 * of them when the balancer closes.
 *
 * <p>A response body the caller never closes would hold its target's in-flight slot for good; once
 * it is garbage-collected a {@link java.lang.ref.Cleaner} frees the slot, counts it in {@code
 * fairway.leaked.responses} and logs the first one. Close your responses all the same.
 *
 * <p>The interceptor listens to each balancer it routes to (to drop a departed target's meters and
 * URLs) for as long as the balancer lives: build one interceptor per client, not one per call.
 *
 * <p>Immutable and thread-safe; share one instance per client. Sync and async calls behave the same
 * (the interceptor runs on the calling thread or OkHttp's dispatcher thread).
 */
public final class LoadBalancingInterceptor implements Interceptor {
  /** The message of the exception thrown when registered as a network interceptor. */
  static final String NETWORK_INTERCEPTOR_MESSAGE =
      "LoadBalancingInterceptor must be added with OkHttpClient.Builder.addInterceptor(), not "
          + "addNetworkInterceptor(): it changes the request's host and port, which a network interceptor may not do";

  private final Map<String, ServiceRoute> routes; // by lower-case logical host; never mutated
  private final @Nullable ServiceRoute onlyRoute; // when exactly one service is registered: skips the map lookup
  final @Nullable AffinityKey affinityKey; // null = no affinity
  final RetryRule retries;
  final boolean keepLogicalHostHeader;
  final long bufferBodiesUpTo;
  final Sleeper sleeper;
  final @Nullable Hedger hedger; // null: no hedging
  private final @Nullable CallObservation observation; // null: no ObservationRegistry given

  private LoadBalancingInterceptor(Builder b) {
    this.hedger = b.hedging == null ? null
        : b.hedgeScheduler != null && b.hedgeExecutor != null
            ? new Hedger(b.hedging, b.hedgeScheduler, b.hedgeExecutor, b.ticker)
            : Hedger.create(b.hedging, b.ticker);
    Map<String, ServiceRoute> built = new HashMap<>();
    for (Map.Entry<String, LoadBalancer> e : b.services.entrySet()) {
      LoadBalancer lb = e.getValue();
      CallMetrics metrics = CallMetrics.of(lb);
      AttemptBudget budget = new AttemptBudget(b.percentCanRetry(), b.minRetriesPerSecond(), b.ticker);
      built.put(e.getKey(), new ServiceRoute(e.getKey(), lb, budget, metrics, hedger, b.failureStatusCodes()));
    }
    this.routes = Map.copyOf(built);
    this.onlyRoute = built.size() == 1 ? built.values().iterator().next() : null;
    this.affinityKey = b.affinityKey;
    this.retries = new RetryRule(b.maxAttempts(), b.retryStatusCodes(), b.backoff());
    this.keepLogicalHostHeader = b.keepLogicalHostHeader != null && b.keepLogicalHostHeader;
    this.bufferBodiesUpTo = b.bufferBodiesUpTo != null ? b.bufferBodiesUpTo : 64 * 1024;
    this.sleeper = b.sleeper;
    this.observation = b.observationRegistry == null ? null : new CallObservation(b.observationRegistry);
  }

  public static Builder builder() {
    return new Builder();
  }

  @Override
  public Response intercept(Chain chain) throws IOException {
    if (chain.connection() != null) {
      throw new IllegalStateException(NETWORK_INTERCEPTOR_MESSAGE);
    }
    if (hedger != null) {
      RaceLeg leg = chain.call().tag(RaceLeg.TAG);
      if (leg != null) {
        return leg.proceed(chain); // one copy of a hedged call, already balanced
      }
    }
    String host = chain.request().url().host(); // canonical: lower case, IPv6 without brackets
    ServiceRoute route = onlyRoute != null ? (onlyRoute.host.equals(host) ? onlyRoute : null) : routes.get(host);
    if (route == null) {
      return chain.proceed(chain.request());
    }
    CallObservation observing = observation;
    if (observing != null) {
      return observing.observe(route, () -> new BalancedCall(chain, route, this).proceed());
    }
    return new BalancedCall(chain, route, this).proceed();
  }

  /** The route of {@code logicalHost}, or null if it has none; for tests. */
  @Nullable ServiceRoute route(String logicalHost) {
    return routes.get(logicalHost);
  }

  @Override
  public String toString() {
    return "LoadBalancingInterceptor{services=" + routes.keySet() + ", maxAttempts=" + retries.maxAttempts()
        + (hedger != null ? ", hedging=" + hedger.policy : "") + "}";
  }

  /**
   * Configures a {@link LoadBalancingInterceptor}. Each setter validates its argument and may be
   * called once (except {@link #service}, once per logical host): a second call throws {@link
   * IllegalStateException}, a bad value {@link IllegalArgumentException} naming field and value.
   * Not thread-safe.
   */
  public static final class Builder {
    private static final int[] DEFAULT_FAILURE_STATUS_CODES = OutcomeRule.defaultFailureStatusCodes();
    private static final int[] DEFAULT_RETRY_STATUS_CODES = {502, 503, 504};

    private final Map<String, LoadBalancer> services = new HashMap<>();
    // Unset (null) until its setter is called; the getters below apply the defaults.
    private @Nullable AffinityKey affinityKey;
    private @Nullable Integer maxAttempts;
    private @Nullable List<Integer> failureStatusCodes;
    private @Nullable List<Integer> retryStatusCodes;
    private @Nullable Boolean keepLogicalHostHeader;
    private @Nullable List<Number> retryBudget; // percentCanRetry, minRetriesPerSecond
    private @Nullable IntervalFunction backoff;
    private @Nullable Long bufferBodiesUpTo;
    private dev.fairway.lb.@Nullable HedgingPolicy hedging;
    private @Nullable ObservationRegistry observationRegistry;
    LongSupplier ticker = System::nanoTime;
    Sleeper sleeper = Sleeper.CANCELLABLE;
    Hedger.@Nullable Scheduler hedgeScheduler;
    @Nullable Executor hedgeExecutor;

    private Builder() {}

    /**
     * Balances requests whose URL host equals {@code logicalHost} (case-insensitive; the URL's port
     * is replaced by the target's) across {@code loadBalancer}'s targets.
     */
    public Builder service(String logicalHost, LoadBalancer loadBalancer) {
      HttpUrl parsed = logicalHost == null || logicalHost.isBlank() ? null : HttpUrl.parse("http://" + logicalHost.trim() + "/");
      if (parsed == null || !parsed.host().equalsIgnoreCase(logicalHost.trim())) {
        throw Args.invalid("logicalHost", logicalHost, "a host name such as \"orders\"");
      }
      Args.requireArgument(loadBalancer != null, "loadBalancer", null, "the LoadBalancer of " + Args.quote(logicalHost));
      String host = parsed.host();
      Args.requireUnset("service " + Args.quote(host), services.get(host));
      services.put(host, loadBalancer);
      return this;
    }

    /** How to find a request's affinity key. Default: none (picks without a key). */
    public Builder affinityKey(AffinityKey key) {
      Args.requireUnset("affinityKey", affinityKey);
      Args.requireArgument(key != null, "affinityKey", null, "an AffinityKey");
      this.affinityKey = key;
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
     * True to send the logical name (say {@code Host: orders}) instead of the target's authority, for
     * servers that route by virtual host. A {@code Host} header set on the request always wins.
     * Default false.
     */
    public Builder keepLogicalHostHeader(boolean keep) {
      Args.requireUnset("keepLogicalHostHeader", keepLogicalHostHeader);
      this.keepLogicalHostHeader = keep;
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
     * Sends a hedge, a second copy of a call to another target, when the first copy has no
     * response after the policy's delay; the first usable response wins and the other copy is
     * cancelled. Only GET, HEAD and OPTIONS requests, and requests tagged {@link
     * Idempotency#IDEMPOTENT}, are hedged; at most one hedge per call, and only for its first
     * attempt. Each hedge takes a token from the policy's own budget ({@link
     * dev.fairway.lb.HedgingPolicy#withBudget}, default 5% of hedgeable calls plus one a second) and one from the
     * retry budget ({@link #retryBudget}), so retries and hedges together stay within the latter;
     * hedges count as attempts toward {@link #maxAttempts}. Default: no hedging.
     *
     * <p>Each copy is a clone of the caller's {@link okhttp3.Call} that passes through the client's
     * interceptors again: add this interceptor first, so that no other application interceptor sees
     * the copies as calls of their own (network interceptors and event listeners always do). Each
     * copy runs with the client's own timeouts (its call timeout then also covers the copy's body);
     * timeouts an earlier interceptor set with {@code chain.withReadTimeout} and the like, and
     * tags set on the caller's {@code Call}, do not carry over to the copies. Request tags do.
     */
    public Builder hedging(dev.fairway.lb.HedgingPolicy policy) {
      Args.requireUnset("hedging", hedging);
      Args.requireArgument(policy != null, "hedging", null, "a HedgingPolicy");
      this.hedging = policy;
      return this;
    }

    /**
     * As {@link #hedging(dev.fairway.lb.HedgingPolicy)}, with lb-okhttp's former name of the same
     * policy.
     *
     * @deprecated use {@link #hedging(dev.fairway.lb.HedgingPolicy)}: the policy type is lb-core's now,
     *     shared by every client integration.
     */
    @Deprecated
    public Builder hedging(HedgingPolicy policy) {
      Args.requireUnset("hedging", hedging);
      Args.requireArgument(policy != null, "hedging", null, "a HedgingPolicy");
      return hedging(policy.core());
    }

    /** How hedges are timed and where they run. For tests. */
    Builder hedgeScheduler(Hedger.Scheduler scheduler, Executor executor) {
      this.hedgeScheduler = scheduler;
      this.hedgeExecutor = executor;
      return this;
    }

    /** The retry budget's clock. For tests. */
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
     * Wraps each balanced call in a Micrometer {@code Observation} named {@code fairway.call}, tagged
     * {@code service} (low cardinality) and, once a response came back, {@code target} (high
     * cardinality: the {@code host:port} that answered), so tracing sees which instance served it.
     * It spans the call from entering the interceptor, over retries, until the response headers
     * are back or the call failed. Default: none, and then no observation work at all.
     */
    public Builder observationRegistry(ObservationRegistry registry) {
      Args.requireUnset("observationRegistry", this.observationRegistry);
      Args.requireArgument(registry != null, "observationRegistry", null, "an ObservationRegistry");
      this.observationRegistry = registry;
      return this;
    }

    /**
     * A new interceptor; the builder is left as it was.
     *
     * @throws IllegalArgumentException naming the field if no service is registered or options conflict
     */
    public LoadBalancingInterceptor build() {
      Args.requireArgument(!services.isEmpty(), "services", "none", "at least one service(logicalHost, loadBalancer)");
      for (int code : retryStatusCodes()) {
        Args.requireArgument(contains(failureStatusCodes(), code), "retryStatusCodes", code,
            "each also in failureStatusCodes " + Arrays.toString(failureStatusCodes()));
      }
      return new LoadBalancingInterceptor(this);
    }

    // Defaults live in these getters, so build() never changes the builder.

    private int maxAttempts() {
      return maxAttempts != null ? maxAttempts : 3;
    }

    private int[] failureStatusCodes() {
      return failureStatusCodes != null ? toArray(failureStatusCodes) : DEFAULT_FAILURE_STATUS_CODES;
    }

    private int[] retryStatusCodes() {
      return retryStatusCodes != null ? toArray(retryStatusCodes) : DEFAULT_RETRY_STATUS_CODES;
    }

    private double percentCanRetry() {
      return retryBudget != null ? retryBudget.get(0).doubleValue() : 0.2;
    }

    private int minRetriesPerSecond() {
      return retryBudget != null ? retryBudget.get(1).intValue() : 10;
    }

    private IntervalFunction backoff() {
      return backoff != null
          ? backoff
          : IntervalFunction.ofExponentialRandomBackoff(Duration.ofMillis(50), 2.0, 0.5, Duration.ofSeconds(1));
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
