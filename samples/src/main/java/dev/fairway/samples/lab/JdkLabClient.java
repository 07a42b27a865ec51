package dev.fairway.samples.lab;

import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.jdk.AffinityKey;
import dev.fairway.lb.jdk.FairwayHttpClient;
import java.io.IOException;
import java.net.Authenticator;
import java.net.CookieHandler;
import java.net.ProxySelector;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpResponse.BodyHandler;
import java.net.http.HttpResponse.PushPromiseHandler;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;

/**
 * {@code --client jdk}: the JDK's {@link HttpClient} behind Fairway's {@link FairwayHttpClient}, over
 * its own {@link LoadBalancer} (built by {@link ScenarioRun} as for OkHttp). The JDK client keeps every
 * idle HTTP/1.1 connection (its pool has no size limit by default) and runs its work on an executor
 * of this class's, which grows with the calls (as the default one does) and is shut down at {@link
 * #close}; so the client is never what limits the users.
 *
 * <p>The adapter has no meters of its own: an {@link AttemptCounter}, the delegate that {@code
 * FairwayHttpClient} sends each attempt through, counts the attempts of each user's call (the
 * synchronous {@code send} makes them all on the caller's thread) and so the retries.
 */
final class JdkLabClient implements LabClient {
  /** The request's own timeout: the JDK client's only read timeout (OkHttp's is 60 s too). */
  static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(60);
  private static final URI WORK = URI.create("http://" + ScenarioRun.SERVICE + "/work");
  private static final AtomicInteger CLIENTS = new AtomicInteger();

  private final LoadBalancer balancer;
  private final ExecutorService executor;
  private final AttemptCounter attempts;
  private final FairwayHttpClient client;

  /**
   * With {@code keyed} (the key strategies), each call's user header is its affinity key, as the
   * OkHttp client's interceptor reads it.
   */
  JdkLabClient(LoadBalancer balancer, int maxAttempts, boolean keyed) {
    this.balancer = balancer;
    int id = CLIENTS.incrementAndGet();
    AtomicInteger threads = new AtomicInteger();
    this.executor = Executors.newCachedThreadPool(r -> {
      Thread t = new Thread(r, "lab-jdk-" + id + "-" + threads.incrementAndGet());
      t.setDaemon(true);
      return t;
    });
    // HTTP/1.1 as the other clients speak it (the JDK's default, HTTP/2, would offer an h2c upgrade
    // on every new connection to servers that speak only 1.1).
    HttpClient jdk = HttpClient.newBuilder()
        .version(HttpClient.Version.HTTP_1_1)
        .connectTimeout(Duration.ofSeconds(2))
        .executor(executor)
        .build();
    this.attempts = new AttemptCounter(jdk);
    FairwayHttpClient.Builder builder =
        FairwayHttpClient.builder(attempts).service(ScenarioRun.SERVICE, balancer).maxAttempts(maxAttempts);
    if (keyed) {
      builder.affinityKey(AffinityKey.header(ScenarioRun.USER_HEADER));
    }
    this.client = builder.build();
  }

  @Override
  public Call caller(String user) {
    HttpRequest request =
        HttpRequest.newBuilder(WORK).header(ScenarioRun.USER_HEADER, user).timeout(REQUEST_TIMEOUT).GET().build();
    return () -> {
      attempts.startCall();
      HttpResponse<byte[]> r;
      try {
        r = client.send(request, HttpResponse.BodyHandlers.ofByteArray());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new java.io.InterruptedIOException("interrupted");
      }
      return new Reply(r.statusCode(), r.headers().firstValue(Backend.BACKEND_HEADER).orElse(null));
    };
  }

  @Override
  public int inFlight(int port) {
    return ScenarioRun.inFlight(balancer, port);
  }

  @Override
  public long retries() {
    return attempts.retries.sum();
  }

  /** The JDK adapter does not hedge. */
  @Override
  public long hedgesSent() {
    return 0;
  }

  /**
   * Stops the executor (the users have stopped: nothing of theirs is still out) and the balancer. On
   * Java 17 the JDK client has no close(): its selector thread ends once the client is unreachable.
   */
  @Override
  public void close() {
    client.close(); // the delegate's close() on Java 21+, nothing on 17
    executor.shutdownNow();
    try {
      executor.awaitTermination(2, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    balancer.close();
  }

  /**
   * The JDK client under {@code FairwayHttpClient}, counting what goes through it: every attempt of
   * a call is one {@code send} here. Everything else is the wrapped client's.
   */
  static final class AttemptCounter extends HttpClient {
    /** Attempts the current thread's call has made so far (the calls of one user run on its thread). */
    private static final ThreadLocal<int[]> ATTEMPTS = ThreadLocal.withInitial(() -> new int[1]);
    final LongAdder retries = new LongAdder();
    private final HttpClient delegate;

    AttemptCounter(HttpClient delegate) {
      this.delegate = delegate;
    }

    void startCall() {
      ATTEMPTS.get()[0] = 0;
    }

    private void attempt() {
      if (ATTEMPTS.get()[0]++ > 0) {
        retries.increment();
      }
    }

    @Override
    public <T> HttpResponse<T> send(HttpRequest request, BodyHandler<T> handler) throws IOException, InterruptedException {
      attempt();
      return delegate.send(request, handler);
    }

    /** Not used by the lab's users (they send synchronously); passed through uncounted. */
    @Override
    public <T> CompletableFuture<HttpResponse<T>> sendAsync(HttpRequest request, BodyHandler<T> handler) {
      return delegate.sendAsync(request, handler);
    }

    /** Not used by the lab's users (they send synchronously); passed through uncounted. */
    @Override
    public <T> CompletableFuture<HttpResponse<T>> sendAsync(HttpRequest request, BodyHandler<T> handler,
        PushPromiseHandler<T> pushPromiseHandler) {
      return delegate.sendAsync(request, handler, pushPromiseHandler);
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
    public Optional<java.util.concurrent.Executor> executor() {
      return delegate.executor();
    }
  }
}
