package dev.fairway.lb.jdk;

import dev.fairway.lb.HedgingPolicy;
import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.internal.Args;
import dev.fairway.lb.internal.AttemptBudget;
import dev.fairway.lb.internal.OutcomeRule;
import dev.fairway.lb.internal.RetryRule;
import dev.fairway.lb.internal.hedging.Hedger;
import io.github.resilience4j.core.IntervalFunction;
import java.io.IOException;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.net.Authenticator;
import java.net.CookieHandler;
import java.net.ProxySelector;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpResponse.BodyHandler;
import java.net.http.HttpResponse.PushPromiseHandler;
import java.net.http.WebSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.function.LongSupplier;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import org.jspecify.annotations.Nullable;

/**
 * A {@link HttpClient} that balances requests to logical hosts across the targets of a {@link
 * LoadBalancer}, retries on another target when that is safe, and reports every outcome back to
 * the balancer. The JDK's client has no interceptors, so this one wraps a client of yours (the
 * delegate) and sends through it: every setting (timeouts, redirects, proxy, TLS, executor, HTTP
 * version) is the delegate's.
 *
 * <pre>{@code
 * LoadBalancer orders = LoadBalancer.builder("orders")
 *     .targets(Target.of("10.0.0.1", 8080), Target.of("10.0.0.2", 8080))
 *     .build();
 * HttpClient client = FairwayHttpClient.builder(HttpClient.newHttpClient()).service("orders", orders).build();
 * HttpResponse<String> response = client.send(
 *     HttpRequest.newBuilder(URI.create("http://orders/api/orders/42")).build(), BodyHandlers.ofString());
 * }</pre>
 *
 * <h2>What it does to a request</h2>
 *
 * <ul>
 *   <li>A request whose URI host equals a registered logical host (compared case-insensitively) is
 *       sent to the picked target's host and port; scheme, user info, path, query, method, headers,
 *       body, timeout and version are kept. The {@code Host} header is the target's authority (the
 *       JDK's client derives it from the URI and does not let a request set it). Requests to any
 *       other host, and {@link #newWebSocketBuilder()}, go to the delegate untouched.
 *   <li>Outcomes: an {@link IOException} is a failure of the target; a status in {@link
 *       Builder#failureStatusCodes} (default 500, 502, 503, 504) is a failure too, but the response
 *       still reaches the caller when no retry applies. Every response's {@code endpoint-load-metrics}
 *       header reaches the balancer. Latency is recorded when the headers arrive; the target's
 *       in-flight slot is held until the body is consumed: the caller's body subscriber completed
 *       or failed, or was cancelled (for {@code BodyHandlers.ofInputStream()}: the stream read to
 *       its end, or closed). Never at headers time, so a streaming body counts as load. A stream
 *       never closed holds its slot for good, as it holds the JDK's connection: the JDK's client
 *       keeps the subscriber reachable while the exchange waits, so no cleaner could tell that
 *       the caller dropped it. Close your streams.
 *   <li>The caller's reasons free the slot and charge no target: an interrupted {@code send}
 *       (which throws {@link InterruptedException}, as the JDK's does) and a cancelled {@code
 *       sendAsync} future end the call at once.
 *   <li>The request's own timeout ({@link HttpRequest#timeout()}, a {@link
 *       java.net.http.HttpTimeoutException}) is the target's failure, as a read timeout is in
 *       lb-okhttp and a response timeout in lb-apache-httpclient5: the JDK's client has no read
 *       timeout, so this is the only way a target that accepts and never answers is seen and
 *       ejected. A resendable request is retried on another target with the same timeout, so a
 *       caller waits at most {@link Builder#maxAttempts} times the timeout, plus backoffs. A
 *       connect timeout ({@link java.net.http.HttpConnectTimeoutException}) is the target's
 *       failure too. A deadline of the caller's own ({@code orTimeout} on the future, or {@code
 *       cancel}) is a cancel.
 *   <li>Retries go to a target this call has not tried yet, at most {@link Builder#maxAttempts}
 *       attempts, decided by lb-core's shared rules (as lb-okhttp's interceptor decides). A
 *       connection that could not be made is retried for every method: the request never left. A
 *       resendable request (idempotent by its method or by its mark: {@link #idempotent}, {@link
 *       #nonIdempotent}) is also retried
 *       after an I/O error once sent, and after a retryable status (default 502, 503, 504), whose
 *       body is then read into memory (up to 64 KiB declared; a longer one is handed on, not retried)
 *       and given to the caller's handler only if no further attempt is made. Only once this call
 *       tried every target does a next round start, after {@link Builder#backoff}. Retries of one
 *       service are limited by a retry budget (default 20% of its request rate plus 10 per second).
 *       A failed call throws its last failure with the earlier ones suppressed.
 *   <li>With {@link Builder#hedging}, a hedgeable request (GET, HEAD, OPTIONS, or one marked {@link
 *       #idempotent}) with no response headers after the policy's delay gets one copy on another
 *       target; the first usable response wins and the other copy is cancelled (see {@link
 *       Builder#hedging}).
 *   <li>The JDK's client itself may re-send a request on the same target (a refused connect once,
 *       and an idempotent request whose pooled connection turned out closed): that happens inside
 *       one attempt, and is left as the JDK does it.
 * </ul>
 *
 * <h2>Bodies</h2>
 *
 * The JDK's contract for {@link HttpRequest.BodyPublisher} is that a request resent for any reason
 * subscribes to its publisher again, which must then publish the same bytes (the JDK's client
 * relies on it for redirects and authentication). Every publisher of {@link
 * HttpRequest.BodyPublishers} keeps it ({@code ofInputStream} calls its supplier again), so every
 * body counts as repeatable; a request whose {@code fromPublisher} source is one-shot breaks the
 * JDK's contract, and must be marked {@link #nonIdempotent}. A request that failed to
 * connect never subscribed to its body, so that retry is safe for every body.
 *
 * <h2>Cancellation</h2>
 *
 * Cancelling the future of {@code sendAsync} with {@code cancel(true)} cancels the attempt in
 * flight: the delegate's future is cancelled too, which on the JDK's client (since JDK 16) aborts
 * the exchange: on HTTP/1.1 it closes the exchange's connection, so the server sees the call end
 * ({@code CancellationTest}); on HTTP/2 it resets that call's stream only, and the other calls on
 * the multiplexed connection go on ({@code Http2Test}). The slot is freed at once, and no further
 * attempt is made.
 *
 * <h2>Closing</h2>
 *
 * On Java 21 and later {@code HttpClient} has {@code shutdown}, {@code shutdownNow}, {@code
 * awaitTermination}, {@code isTerminated} and {@code close}; this class declares them (and is
 * {@link AutoCloseable} on every Java), and passes each to the delegate where the running JDK has
 * it. On Java 17 the JDK's client has none of them, and they do nothing. The balancers are not
 * closed: they are the caller's.
 *
 * <p>Immutable and thread-safe; share one instance. It listens to each balancer it routes to for as
 * long as the balancer lives: build one client per delegate, not one per call.
 */
public final class FairwayHttpClient extends HttpClient implements AutoCloseable {
  final HttpClient delegate;
  private final Map<String, ServiceRoute> routes; // by lower-case logical host; never mutated
  private final @Nullable ServiceRoute onlyRoute; // when exactly one service is registered: no map lookup
  final RetryRule retries;
  final Sleeper sleeper;
  final @Nullable AffinityKey affinityKey; // null = every pick without a key
  private final @Nullable Hedger hedger; // null: no hedging

  private FairwayHttpClient(Builder b) {
    this.delegate = b.delegate;
    this.affinityKey = b.affinityKey;
    HedgingPolicy policy = b.hedging;
    this.hedger = policy == null ? null
        : b.hedgeScheduler != null && b.hedgeExecutor != null
            ? new Hedger(policy, b.hedgeScheduler, b.hedgeExecutor, b.ticker)
            : Hedger.create(policy, b.ticker);
    Map<String, ServiceRoute> built = new HashMap<>();
    for (Map.Entry<String, LoadBalancer> e : b.services.entrySet()) {
      AttemptBudget budget = new AttemptBudget(b.percentCanRetry(), b.minRetriesPerSecond(), b.ticker);
      built.put(e.getKey(), new ServiceRoute(e.getKey(), e.getValue(), budget, b.failureStatusCodes(), hedger));
    }
    this.routes = Map.copyOf(built);
    this.onlyRoute = built.size() == 1 ? built.values().iterator().next() : null;
    this.retries = new RetryRule(b.maxAttempts(), b.retryStatusCodes(), b.backoff());
    this.sleeper = b.sleeper;
  }

  /**
   * A builder of a client that sends through {@code delegate}.
   *
   * @throws IllegalArgumentException if {@code delegate} is null
   */
  public static Builder builder(HttpClient delegate) {
    return new Builder(delegate);
  }

  /**
   * {@code request} marked safe to send again whatever its method (say a POST whose server
   * deduplicates by an {@code Idempotency-Key} header): retried on another target after an I/O
   * error once sent and after a retryable status. What goes on the wire is unchanged.
   *
   * <pre>{@code
   * HttpRequest create = FairwayHttpClient.idempotent(HttpRequest.newBuilder(URI.create("http://orders/api/orders"))
   *     .header("Idempotency-Key", key)
   *     .POST(BodyPublishers.ofString(json))
   *     .build());
   * }</pre>
   *
   * <p>Why a wrapping request: the JDK's {@link HttpRequest} has no tags, and a header would go to
   * the server, while the mark must change what the client does, not what the server sees. {@code
   * HttpRequest} is an abstract class whose subclasses the JDK's client accepts, so the returned
   * request sends exactly what {@code request} sends (method, URI, headers, body, timeout,
   * version) and carries the mark. A request built from it with {@code HttpRequest.newBuilder(request,
   * filter)} loses the mark. Without a mark, GET, HEAD, OPTIONS, TRACE, PUT and DELETE are
   * idempotent and every other method is not. A request marked already gets this mark instead.
   *
   * @throws NullPointerException if {@code request} is null
   */
  public static HttpRequest idempotent(HttpRequest request) {
    return MarkedRequest.mark(request, true);
  }

  /**
   * {@code request} marked never to be sent again once it may have reached a server, whatever its
   * method: only a connection that could not be made is retried on another target. For a request
   * whose body cannot be published twice (see Bodies above). What goes on the wire is unchanged;
   * see {@link #idempotent} on marks.
   *
   * @throws NullPointerException if {@code request} is null
   */
  public static HttpRequest nonIdempotent(HttpRequest request) {
    return MarkedRequest.mark(request, false);
  }

  /** The route of {@code logicalHost} (lower case), or null if it has none; for tests. */
  @Nullable ServiceRoute route(String logicalHost) {
    return routes.get(logicalHost);
  }

  /** The route of a request's host, or null when the host is no registered service. */
  private @Nullable ServiceRoute route(HttpRequest request) {
    String host = request.uri().getHost();
    if (host == null) {
      return null;
    }
    ServiceRoute only = onlyRoute;
    if (only != null) {
      return only.host.equalsIgnoreCase(host) ? only : null;
    }
    return routes.get(host.toLowerCase(Locale.ROOT));
  }

  @Override
  public <T> HttpResponse<T> send(HttpRequest request, BodyHandler<T> responseBodyHandler)
      throws IOException, InterruptedException {
    ServiceRoute route = route(request);
    if (route == null) {
      return delegate.send(request, responseBodyHandler);
    }
    return new BalancedExchange<>(this, route, request, responseBodyHandler, null).send();
  }

  @Override
  public <T> CompletableFuture<HttpResponse<T>> sendAsync(HttpRequest request, BodyHandler<T> responseBodyHandler) {
    ServiceRoute route = route(request);
    if (route == null) {
      return delegate.sendAsync(request, responseBodyHandler);
    }
    return new BalancedExchange<>(this, route, request, responseBodyHandler, null).sendAsync();
  }

  /** As {@link #sendAsync(HttpRequest, BodyHandler)}; pushed responses go to the handler unbalanced. */
  @Override
  public <T> CompletableFuture<HttpResponse<T>> sendAsync(HttpRequest request, BodyHandler<T> responseBodyHandler,
      @Nullable PushPromiseHandler<T> pushPromiseHandler) {
    ServiceRoute route = route(request);
    if (route == null) {
      return delegate.sendAsync(request, responseBodyHandler, pushPromiseHandler);
    }
    return new BalancedExchange<>(this, route, request, responseBodyHandler, pushPromiseHandler).sendAsync();
  }

  @Override
  public Optional<CookieHandler> cookieHandler() {
    return delegate.cookieHandler();
  }

  @Override
  public Optional<Duration> connectTimeout() {
    return delegate.connectTimeout();
  }

  @Override
  public Redirect followRedirects() {
    return delegate.followRedirects();
  }

  @Override
  public Optional<ProxySelector> proxy() {
    return delegate.proxy();
  }

  @Override
  public SSLContext sslContext() {
    return delegate.sslContext();
  }

  @Override
  public SSLParameters sslParameters() {
    return delegate.sslParameters();
  }

  @Override
  public Optional<Authenticator> authenticator() {
    return delegate.authenticator();
  }

  @Override
  public Version version() {
    return delegate.version();
  }

  @Override
  public Optional<Executor> executor() {
    return delegate.executor();
  }

  /** The delegate's: a WebSocket is not balanced. */
  @Override
  public WebSocket.Builder newWebSocketBuilder() {
    return delegate.newWebSocketBuilder();
  }

  // Java 21's lifecycle methods. Declared here without @Override: on Java 17 HttpClient has none of
  // them, on Java 21+ these override HttpClient's. Each calls the delegate's through a handle looked
  // up once, absent (so a no-op) where the running JDK lacks the method.

  /** The delegate's {@code shutdown()} on Java 21+; nothing on Java 17. */
  public void shutdown() {
    Lifecycle.invoke(Lifecycle.SHUTDOWN, delegate);
  }

  /** The delegate's {@code shutdownNow()} on Java 21+; nothing on Java 17. */
  public void shutdownNow() {
    Lifecycle.invoke(Lifecycle.SHUTDOWN_NOW, delegate);
  }

  /** The delegate's {@code isTerminated()} on Java 21+; false on Java 17. */
  public boolean isTerminated() {
    return Boolean.TRUE.equals(Lifecycle.invoke(Lifecycle.IS_TERMINATED, delegate));
  }

  /**
   * The delegate's {@code awaitTermination(duration)} on Java 21+; true at once on Java 17, as
   * Java 21's default does.
   */
  public boolean awaitTermination(Duration duration) throws InterruptedException {
    if (duration == null) {
      throw new NullPointerException("duration");
    }
    MethodHandle await = Lifecycle.AWAIT_TERMINATION;
    if (await == null) {
      return true;
    }
    try {
      return (boolean) await.invoke(delegate, duration);
    } catch (InterruptedException | RuntimeException | Error e) {
      throw e;
    } catch (Throwable e) {
      throw new IllegalStateException(e);
    }
  }

  /** The delegate's {@code close()} on Java 21+ (waits for its exchanges to end); nothing on Java 17. */
  @Override
  public void close() {
    if (delegate instanceof AutoCloseable) { // HttpClient is from Java 21 on
      Lifecycle.invoke(Lifecycle.CLOSE, delegate);
    }
  }

  @Override
  public String toString() {
    Hedger h = hedger;
    return "FairwayHttpClient{services=" + routes.keySet() + ", maxAttempts=" + retries.maxAttempts()
        + (h != null ? ", hedging=" + h.policy : "") + ", delegate=" + delegate + "}";
  }

  /** Handles on Java 21's HttpClient lifecycle methods; null where the running JDK lacks one. */
  private static final class Lifecycle {
    static final @Nullable MethodHandle SHUTDOWN = find("shutdown", MethodType.methodType(void.class));
    static final @Nullable MethodHandle SHUTDOWN_NOW = find("shutdownNow", MethodType.methodType(void.class));
    static final @Nullable MethodHandle IS_TERMINATED = find("isTerminated", MethodType.methodType(boolean.class));
    static final @Nullable MethodHandle AWAIT_TERMINATION =
        find("awaitTermination", MethodType.methodType(boolean.class, Duration.class));
    static final @Nullable MethodHandle CLOSE = find("close", MethodType.methodType(void.class));

    private Lifecycle() {}

    private static @Nullable MethodHandle find(String name, MethodType type) {
      try {
        return MethodHandles.publicLookup().findVirtual(HttpClient.class, name, type);
      } catch (NoSuchMethodException | IllegalAccessException e) {
        return null; // Java 17..20
      }
    }

    /** {@code handle} on {@code client}; null (nothing done) when the handle is absent. */
    static @Nullable Object invoke(@Nullable MethodHandle handle, HttpClient client) {
      if (handle == null) {
        return null;
      }
      try {
        return handle.invoke(client);
      } catch (RuntimeException | Error e) {
        throw e;
      } catch (Throwable e) {
        throw new IllegalStateException(e);
      }
    }
  }

  /**
   * Configures a {@link FairwayHttpClient}. The same options, names and defaults as lb-okhttp's
   * {@code LoadBalancingInterceptor.Builder}. Each setter validates its argument and may be called
   * once (except {@link #service}, once per logical host): a second call throws {@link
   * IllegalStateException}, a bad value {@link IllegalArgumentException} naming field and value.
   * Not thread-safe.
   */
  public static final class Builder {
    private static final int[] DEFAULT_FAILURE_STATUS_CODES = OutcomeRule.defaultFailureStatusCodes();
    private static final int[] DEFAULT_RETRY_STATUS_CODES = {502, 503, 504};

    private final HttpClient delegate;
    private final Map<String, LoadBalancer> services = new HashMap<>();
    // Unset (null) until its setter is called; the getters below apply the defaults.
    private @Nullable Integer maxAttempts;
    private @Nullable List<Integer> failureStatusCodes;
    private @Nullable List<Integer> retryStatusCodes;
    private @Nullable List<Number> retryBudget; // percentCanRetry, minRetriesPerSecond
    private @Nullable IntervalFunction backoff;
    private @Nullable AffinityKey affinityKey;
    private @Nullable HedgingPolicy hedging;
    Hedger.@Nullable Scheduler hedgeScheduler;
    @Nullable Executor hedgeExecutor;
    LongSupplier ticker = System::nanoTime;
    Sleeper sleeper = Sleeper.SYSTEM;

    private Builder(HttpClient delegate) {
      if (delegate == null) {
        throw Args.invalid("delegate", null, "the HttpClient that sends the requests");
      }
      if (delegate instanceof FairwayHttpClient) {
        throw Args.invalid("delegate", delegate, "a client that is not a FairwayHttpClient (one balancer per call)");
      }
      this.delegate = delegate;
    }

    /**
     * Balances requests whose URI host equals {@code logicalHost} (case-insensitive; the URI's port
     * is replaced by the target's) across {@code loadBalancer}'s targets.
     */
    public Builder service(String logicalHost, LoadBalancer loadBalancer) {
      String host = logicalHost == null ? null : logicalHost.trim().toLowerCase(Locale.ROOT);
      if (host == null || host.isEmpty() || !isHostName(host)) {
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
     * Failure statuses after which a resendable request is retried on another target. Each must
     * also be a failure status. Default 502, 503, 504.
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
     * The wait before round {@code n} (1, 2, ...) of attempts once a call tried every target, in
     * milliseconds. Default: exponential from 50 ms, factor 2, randomized by 50%, at most 1 s.
     */
    public Builder backoff(IntervalFunction backoff) {
      Args.requireUnset("backoff", this.backoff);
      Args.requireArgument(backoff != null, "backoff", null, "an IntervalFunction");
      this.backoff = backoff;
      return this;
    }

    /**
     * How to find a request's affinity key, given to every pick of its call (the first attempt and
     * each retry, which still avoids the targets the call tried). Default: none (every pick without
     * a key).
     */
    public Builder affinityKey(AffinityKey key) {
      Args.requireUnset("affinityKey", affinityKey);
      Args.requireArgument(key != null, "affinityKey", null, "an AffinityKey");
      this.affinityKey = key;
      return this;
    }

    /**
     * Sends a hedge, a second copy of a request to another target, when the first copy has no
     * response headers after the policy's delay (fixed, or a percentile of the first copy's
     * target's recent response times); the first usable response (not a failure status) wins, and
     * the other copy is cancelled with {@code CompletableFuture.cancel} on its JDK exchange, which
     * aborts it (see Cancellation above). The same policy type and decisions as lb-okhttp's {@code
     * LoadBalancingInterceptor.Builder.hedging}: a hedge goes only to a target that may have a free
     * worker, or where it is likely to answer first although it waits (the free-worker and queue
     * judge); it takes a token from the policy's own budget ({@link HedgingPolicy#withBudget},
     * default 5% of hedgeable requests plus one a second) and one from the retry budget ({@link
     * #retryBudget}); a copy that lost before its answer keeps its slot for a while ({@link
     * HedgingPolicy#withLoserHold}). Default: no hedging.
     *
     * <p>Hedged: requests that may have two copies in flight, by lb-core's shared rule: GET, HEAD
     * and OPTIONS, and requests marked {@link FairwayHttpClient#idempotent}; never one marked
     * {@link FairwayHttpClient#nonIdempotent}. At most one hedge per call, for its first attempt
     * only; the hedge counts as an attempt toward {@link #maxAttempts}. Only the winner's body goes
     * to your body handler (a failure status's body is read into memory while the other copy may
     * still win, as for a retry). Both {@code sendAsync} and {@code send} hedge; {@code send} runs
     * the race on the async path and waits, and an interrupt cancels both copies.
     *
     * @throws IllegalArgumentException if {@code policy} is null
     * @throws IllegalStateException if hedging was set already
     */
    public Builder hedging(HedgingPolicy policy) {
      Args.requireUnset("hedging", hedging);
      Args.requireArgument(policy != null, "hedging", null, "a HedgingPolicy");
      this.hedging = policy;
      return this;
    }

    /** How hedges are timed and where they run. For tests. */
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
     * A new client; the builder is left as it was.
     *
     * @throws IllegalArgumentException naming the field if no service is registered or options conflict
     */
    public FairwayHttpClient build() {
      Args.requireArgument(!services.isEmpty(), "services", "none", "at least one service(logicalHost, loadBalancer)");
      for (int code : retryStatusCodes()) {
        Args.requireArgument(contains(failureStatusCodes(), code), "retryStatusCodes", code,
            "each also in failureStatusCodes " + Arrays.toString(failureStatusCodes()));
      }
      return new FairwayHttpClient(this);
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

    /** A registered name, as java.net.URI reads a host: letters, digits, '-' and '.', not starting with '-' or '.'. */
    private static boolean isHostName(String host) {
      try {
        return host.equals(new java.net.URI("http", null, host, -1, "/", null, null).getHost());
      } catch (java.net.URISyntaxException e) {
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
