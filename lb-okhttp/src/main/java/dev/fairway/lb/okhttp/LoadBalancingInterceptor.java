package dev.fairway.lb.okhttp;

import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.NoTargetAvailableException;
import dev.fairway.lb.Pick;
import dev.fairway.lb.Target;
import io.github.resilience4j.core.IntervalFunction;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.LongSupplier;
import javax.net.ssl.SSLHandshakeException;
import okhttp3.Call;
import okhttp3.HttpUrl;
import okhttp3.Interceptor;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import okhttp3.ResponseBody;

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
 *       arrive. A cancelled call only frees its slot.
 *   <li>Retries go to a target this call has not tried yet, at most {@link Builder#maxAttempts}
 *       attempts (distinct targets, not OkHttp's internal re-sends). A connection that could not be
 *       made (refused, no route, connect timeout, TLS handshake failure, unknown host) is always
 *       retried: the request never left. An idempotent request (see {@link Idempotency}) is also
 *       retried after an I/O error once sent, and after a retryable status (default 502, 503, 504).
 *       Once every target was tried, the next round waits {@link Builder#backoff} first. Retries of
 *       one service are limited by a retry budget (default 20% of its request rate plus 10 per
 *       second, as Finagle does). A retried response is closed before the next attempt.
 * </ul>
 *
 * <h2>OkHttp's own retryOnConnectionFailure</h2>
 *
 * OkHttp re-sends a request on a fresh connection to the <em>same</em> target when a pooled
 * connection turns out to be dead, and it does so for a POST too. The interceptor leaves that on for
 * idempotent requests (it absorbs stale pooled connections without blaming a healthy target) and
 * turns it off for the call with {@code chain.withRetryOnConnectionFailure(false)} for
 * non-idempotent ones, so a POST is sent at most once unless the connection could not be made at
 * all. Such re-sends happen inside one attempt; attempts count distinct targets. If the client
 * itself has {@code retryOnConnectionFailure(false)}, nothing is turned on.
 *
 * <p>Must be added with {@code OkHttpClient.Builder.addInterceptor}; as a network interceptor it
 * throws {@link IllegalStateException} on the first call, since OkHttp forbids network interceptors
 * to change the host and port.
 *
 * <p>Immutable and thread-safe; share one instance per client. Metrics ({@code fairway.requests},
 * {@code fairway.retries}, {@code fairway.retry.budget.exhausted}) go to the balancer's meter
 * registry if it has one, and cost nothing otherwise.
 */
public final class LoadBalancingInterceptor implements Interceptor {
  /** The message of the exception thrown when registered as a network interceptor. */
  static final String NETWORK_INTERCEPTOR_MESSAGE =
      "LoadBalancingInterceptor must be added with OkHttpClient.Builder.addInterceptor(), not "
          + "addNetworkInterceptor(): it changes the request's host and port, which a network interceptor may not do";

  private final Map<String, ServiceRoute> routes; // by lower-case logical host; never mutated
  private final ServiceRoute onlyRoute; // when exactly one service is registered: skips the map lookup
  private final AffinityKey affinityKey; // null = no affinity
  private final int maxAttempts;
  private final boolean[] failureStatus = new boolean[600];
  private final boolean[] retryStatus = new boolean[600];
  private final boolean keepLogicalHostHeader;
  private final IntervalFunction backoff;

  private LoadBalancingInterceptor(Builder b) {
    Map<String, ServiceRoute> built = new HashMap<>();
    for (Map.Entry<String, LoadBalancer> e : b.services.entrySet()) {
      LoadBalancer lb = e.getValue();
      CallMetrics metrics = lb.meterRegistry().map(r -> CallMetrics.micrometer(r, lb.service())).orElse(CallMetrics.NOOP);
      built.put(e.getKey(), new ServiceRoute(e.getKey(), lb, new RetryBudget(b.percentCanRetry, b.minRetriesPerSecond, b.ticker), metrics));
    }
    this.routes = Map.copyOf(built);
    this.onlyRoute = built.size() == 1 ? built.values().iterator().next() : null;
    this.affinityKey = b.affinityKey;
    this.maxAttempts = b.maxAttempts;
    for (int code : b.failureStatusCodes) {
      failureStatus[code] = true;
    }
    for (int code : b.retryStatusCodes) {
      retryStatus[code] = true;
    }
    this.keepLogicalHostHeader = b.keepLogicalHostHeader;
    this.backoff = b.backoff;
  }

  public static Builder builder() {
    return new Builder();
  }

  @Override
  public Response intercept(Chain chain) throws IOException {
    if (chain.connection() != null) {
      throw new IllegalStateException(NETWORK_INTERCEPTOR_MESSAGE);
    }
    Request request = chain.request();
    String host = request.url().host(); // canonical: lower case, IPv6 without brackets
    ServiceRoute route = onlyRoute != null ? (onlyRoute.host.equals(host) ? onlyRoute : null) : routes.get(host);
    if (route == null) {
      return chain.proceed(request);
    }
    return balance(chain, request, route);
  }

  private Response balance(Chain chain, Request request, ServiceRoute route) throws IOException {
    LoadBalancer lb = route.loadBalancer;
    CallMetrics metrics = route.metrics;
    Call call = chain.call();
    String key = affinityKey == null ? null : affinityKey.apply(request);
    boolean idempotent = isIdempotent(request);
    boolean resendable = idempotent && isResendable(request.body());
    Chain proceeding = chain;
    if (!resendable && chain.getRetryOnConnectionFailure()) {
      proceeding = chain.withRetryOnConnectionFailure(false);
    }
    route.budget.deposit();

    Set<Target> tried = null; // allocated on the first retry only
    Response previous = null; // a retryable-status response, returned if no further attempt is made
    IOException previousFailure = null;
    String retryReason = null;
    int attempts = 0;
    int backoffRounds = 0;
    for (;;) {
      long pickStart = metrics.startNanos();
      Pick pick;
      try {
        pick = lb.pick(key, tried);
      } catch (NoTargetAvailableException e) {
        pick = null;
        if (tried != null && !tried.isEmpty()) {
          // Every target this call may use was tried: wait, then start a new round over all of them.
          backoffRounds++;
          sleep(backoff.apply(backoffRounds), call);
          tried.clear();
          try {
            pick = lb.pick(key, null);
          } catch (NoTargetAvailableException again) {
            e = again;
          }
        }
        if (pick == null) {
          metrics.noTarget(pickStart);
          return giveUp(previous, previousFailure, e);
        }
      }
      if (attempts > 0) {
        if (!route.budget.tryWithdraw()) {
          pick.release();
          metrics.budgetExhausted();
          return giveUp(previous, previousFailure, null);
        }
        metrics.retry(retryReason);
        if (previous != null) {
          previous.close(); // completes its pick as a failure
          previous = null;
        }
      }
      attempts++;
      Target target = pick.target();
      long start = metrics.startNanos();
      Response response;
      try {
        response = proceeding.proceed(rewrite(request, target));
      } catch (IOException e) {
        if (call.isCanceled()) {
          pick.release();
          metrics.attempt(target, CallMetrics.Outcome.CANCELLED, start);
          throw e;
        }
        pick.failure(e);
        metrics.attempt(target, CallMetrics.Outcome.FAILURE, start);
        boolean neverSent = isConnectFailure(e);
        if (attempts >= maxAttempts || !(neverSent || resendable)) {
          throw e;
        }
        previousFailure = e;
        retryReason = neverSent ? CallMetrics.CONNECT_FAILURE : CallMetrics.IO_FAILURE;
        tried = add(tried, target);
        continue;
      } catch (RuntimeException | Error e) {
        pick.release(); // a bug in a later interceptor, not the target's fault
        throw e;
      }
      pick.recordLatency();
      int code = response.code();
      boolean failed = code < failureStatus.length && failureStatus[code];
      TrackedResponseBody.Attempt attempt = new TrackedResponseBody.Attempt(pick, call, metrics, start, failed ? code : 0);
      Response tracked = track(response, attempt);
      if (failed && resendable && retryStatus[code] && attempts < maxAttempts) {
        previous = tracked;
        previousFailure = null;
        retryReason = "status_" + code;
        tried = add(tried, target);
        continue;
      }
      return tracked;
    }
  }

  /** The previous outcome when no further attempt can be made. */
  private static Response giveUp(Response previous, IOException previousFailure, NoTargetAvailableException noTarget)
      throws IOException {
    if (previous != null) {
      return previous;
    }
    if (previousFailure != null) {
      if (noTarget != null) {
        previousFailure.addSuppressed(noTarget);
      }
      throw previousFailure;
    }
    throw noTarget;
  }

  private Request rewrite(Request request, Target target) {
    HttpUrl logical = request.url();
    HttpUrl url = logical.newBuilder().host(target.host()).port(target.port()).build();
    Request.Builder builder = request.newBuilder().url(url);
    if (keepLogicalHostHeader && request.header("Host") == null) {
      builder.header("Host", hostHeader(logical));
    }
    return builder.build();
  }

  private static String hostHeader(HttpUrl url) {
    return url.port() == HttpUrl.defaultPort(url.scheme()) ? url.host() : url.host() + ":" + url.port();
  }

  /** Wraps the body so the pick completes when the body is done; completes at once if there is none. */
  private static Response track(Response response, TrackedResponseBody.Attempt attempt) {
    ResponseBody body = response.body();
    if (!promisesBody(response) || body.contentLength() == 0) {
      attempt.complete(null);
      return response;
    }
    return response.newBuilder().body(new TrackedResponseBody(body, attempt)).build();
  }

  private static boolean promisesBody(Response response) {
    int code = response.code();
    if ("HEAD".equals(response.request().method()) || code == 204 || code == 304 || (code >= 100 && code < 200)) {
      return false;
    }
    return true;
  }

  private static boolean isIdempotent(Request request) {
    Idempotency tagged = request.tag(Idempotency.class);
    if (tagged != null) {
      return tagged == Idempotency.IDEMPOTENT;
    }
    switch (request.method()) {
      case "GET":
      case "HEAD":
      case "OPTIONS":
      case "TRACE":
      case "PUT":
      case "DELETE":
        return true;
      default:
        return false;
    }
  }

  /** A one-shot or duplex body cannot be written twice, so such a request is never re-sent. */
  private static boolean isResendable(RequestBody body) {
    return body == null || !(body.isOneShot() || body.isDuplex());
  }

  /**
   * True if {@code e} (and every failure OkHttp suppressed into it) happened before a connection
   * existed, so the request never reached a server.
   */
  static boolean isConnectFailure(IOException e) {
    if (!connectFailureType(e)) {
      return false;
    }
    for (Throwable suppressed : e.getSuppressed()) {
      if (!connectFailureType(suppressed)) {
        return false; // an earlier try inside OkHttp may have sent the request
      }
    }
    return true;
  }

  private static boolean connectFailureType(Throwable t) {
    for (int depth = 0; t != null && depth < 4; depth++, t = t.getCause()) {
      if (t instanceof ConnectException
          || t instanceof NoRouteToHostException
          || t instanceof UnknownHostException
          || t instanceof SSLHandshakeException) {
        return true;
      }
      if (t instanceof SocketTimeoutException) {
        // The JDK reports a connect timeout as "Connect timed out"; read timeouts say "Read timed
        // out" or OkHttp's "timeout", and those may come after the request was sent.
        String message = t.getMessage();
        return message != null && message.toLowerCase(Locale.ROOT).contains("connect");
      }
    }
    return false;
  }

  private static Set<Target> add(Set<Target> tried, Target target) {
    Set<Target> set = tried != null ? tried : new HashSet<>(8);
    set.add(target);
    return set;
  }

  private static void sleep(Long millis, Call call) throws IOException {
    if (millis == null || millis <= 0) {
      return;
    }
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new InterruptedIOException("interrupted during retry backoff");
    }
    if (call.isCanceled()) {
      throw new IOException("Canceled");
    }
  }

  @Override
  public String toString() {
    return "LoadBalancingInterceptor{services=" + routes.keySet() + ", maxAttempts=" + maxAttempts + "}";
  }

  /** One logical host's balancer, retry budget and meters. */
  private static final class ServiceRoute {
    final String host;
    final LoadBalancer loadBalancer;
    final RetryBudget budget;
    final CallMetrics metrics;

    ServiceRoute(String host, LoadBalancer loadBalancer, RetryBudget budget, CallMetrics metrics) {
      this.host = host;
      this.loadBalancer = loadBalancer;
      this.budget = budget;
      this.metrics = metrics;
    }
  }

  /**
   * Configures a {@link LoadBalancingInterceptor}. Each setter validates its argument and may be
   * called once (except {@link #service}, once per logical host).
   */
  public static final class Builder {
    private final Map<String, LoadBalancer> services = new HashMap<>();
    private AffinityKey affinityKey;
    private boolean affinityKeySet;
    private Integer maxAttemptsSet;
    private int maxAttempts = 3;
    private int[] failureStatusCodes;
    private int[] retryStatusCodes;
    private Boolean keepLogicalHostHeaderSet;
    private boolean keepLogicalHostHeader;
    private boolean retryBudgetSet;
    private double percentCanRetry = 0.2;
    private int minRetriesPerSecond = 10;
    private IntervalFunction backoff;
    LongSupplier ticker = System::nanoTime;

    private Builder() {}

    /**
     * Balances requests whose URL host equals {@code logicalHost} (case-insensitive; the URL's port
     * is replaced by the target's) across {@code loadBalancer}'s targets.
     */
    public Builder service(String logicalHost, LoadBalancer loadBalancer) {
      HttpUrl parsed = logicalHost == null || logicalHost.isBlank() ? null : HttpUrl.parse("http://" + logicalHost.trim() + "/");
      if (parsed == null || !parsed.host().equalsIgnoreCase(logicalHost.trim())) {
        throw new IllegalArgumentException("logicalHost: " + quote(logicalHost) + " (expected: a host name such as \"orders\")");
      }
      if (loadBalancer == null) {
        throw new IllegalArgumentException("loadBalancer: null (expected: the LoadBalancer of " + quote(logicalHost) + ")");
      }
      String host = parsed.host();
      if (services.containsKey(host)) {
        throw new IllegalArgumentException("logicalHost: " + quote(host) + " is already registered (expected: each host once)");
      }
      services.put(host, loadBalancer);
      return this;
    }

    /** How to find a request's affinity key. Default: none (picks without a key). */
    public Builder affinityKey(AffinityKey key) {
      requireUnset("affinityKey", affinityKeySet);
      if (key == null) {
        throw new IllegalArgumentException("affinityKey: null (expected: an AffinityKey)");
      }
      this.affinityKey = key;
      this.affinityKeySet = true;
      return this;
    }

    /** Attempts per call, each on a distinct target while untried ones remain. 1 = no retry. Default 3. */
    public Builder maxAttempts(int attempts) {
      requireUnset("maxAttempts", maxAttemptsSet != null);
      if (attempts < 1 || attempts > 10) {
        throw new IllegalArgumentException("maxAttempts: " + attempts + " (expected: 1..10)");
      }
      this.maxAttemptsSet = attempts;
      this.maxAttempts = attempts;
      return this;
    }

    /** Statuses reported to the balancer as failures (the response still reaches the caller). Default 500, 502, 503, 504. */
    public Builder failureStatusCodes(int... codes) {
      requireUnset("failureStatusCodes", failureStatusCodes != null);
      this.failureStatusCodes = checkCodes("failureStatusCodes", codes);
      return this;
    }

    /**
     * Failure statuses after which an idempotent request is retried on another target. Each must also
     * be a failure status. Default 502, 503, 504.
     */
    public Builder retryStatusCodes(int... codes) {
      requireUnset("retryStatusCodes", retryStatusCodes != null);
      this.retryStatusCodes = checkCodes("retryStatusCodes", codes);
      return this;
    }

    /**
     * True to send the logical name (say {@code Host: orders}) instead of the target's authority, for
     * servers that route by virtual host. A {@code Host} header set on the request always wins.
     * Default false.
     */
    public Builder keepLogicalHostHeader(boolean keep) {
      requireUnset("keepLogicalHostHeader", keepLogicalHostHeaderSet != null);
      this.keepLogicalHostHeaderSet = keep;
      this.keepLogicalHostHeader = keep;
      return this;
    }

    /**
     * Retries per service may add at most {@code percentCanRetry} (0.0..10.0; 0.2 = 20%) to the
     * request rate, plus {@code minRetriesPerSecond} (0..10000) so low traffic can retry too, both
     * over a 10-second window. Default 0.2 and 10.
     */
    public Builder retryBudget(double percentCanRetry, int minRetriesPerSecond) {
      requireUnset("retryBudget", retryBudgetSet);
      if (!(percentCanRetry >= 0.0 && percentCanRetry <= 10.0)) {
        throw new IllegalArgumentException("percentCanRetry: " + percentCanRetry + " (expected: 0.0..10.0)");
      }
      if (minRetriesPerSecond < 0 || minRetriesPerSecond > 10_000) {
        throw new IllegalArgumentException("minRetriesPerSecond: " + minRetriesPerSecond + " (expected: 0..10000)");
      }
      this.retryBudgetSet = true;
      this.percentCanRetry = percentCanRetry;
      this.minRetriesPerSecond = minRetriesPerSecond;
      return this;
    }

    /**
     * The wait before round {@code n} (1, 2, ...) of attempts once every target was tried, in
     * milliseconds. Default: exponential from 50 ms, factor 2, randomized by 50%, at most 1 s.
     */
    public Builder backoff(IntervalFunction backoff) {
      requireUnset("backoff", this.backoff != null);
      if (backoff == null) {
        throw new IllegalArgumentException("backoff: null (expected: an IntervalFunction)");
      }
      this.backoff = backoff;
      return this;
    }

    Builder ticker(LongSupplier ticker) {
      this.ticker = ticker;
      return this;
    }

    /** @throws IllegalArgumentException naming the field if no service is registered or options conflict */
    public LoadBalancingInterceptor build() {
      if (services.isEmpty()) {
        throw new IllegalArgumentException("services: none (expected: at least one service(logicalHost, loadBalancer))");
      }
      if (failureStatusCodes == null) {
        failureStatusCodes = new int[] {500, 502, 503, 504};
      }
      if (retryStatusCodes == null) {
        retryStatusCodes = new int[] {502, 503, 504};
      }
      for (int code : retryStatusCodes) {
        if (Arrays.stream(failureStatusCodes).noneMatch(c -> c == code)) {
          throw new IllegalArgumentException("retryStatusCodes: " + code
              + " is not a failure status (expected: each also in failureStatusCodes " + Arrays.toString(failureStatusCodes) + ")");
        }
      }
      if (backoff == null) {
        backoff = IntervalFunction.ofExponentialRandomBackoff(Duration.ofMillis(50), 2.0, 0.5, Duration.ofSeconds(1));
      }
      return new LoadBalancingInterceptor(this);
    }

    private static int[] checkCodes(String field, int[] codes) {
      if (codes == null) {
        throw new IllegalArgumentException(field + ": null (expected: HTTP status codes, possibly none)");
      }
      for (int code : codes) {
        if (code < 100 || code > 599) {
          throw new IllegalArgumentException(field + ": " + code + " (expected: 100..599)");
        }
      }
      return codes.clone();
    }

    private static void requireUnset(String field, boolean set) {
      if (set) {
        throw new IllegalArgumentException(field + ": already set (expected: set once)");
      }
    }

    private static String quote(String s) {
      return s == null ? "null" : "\"" + s + "\"";
    }
  }
}
