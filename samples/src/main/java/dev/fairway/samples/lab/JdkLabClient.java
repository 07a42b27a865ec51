package dev.fairway.samples.lab;

import dev.fairway.lb.HedgingPolicy;
import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.jdk.AffinityKey;
import dev.fairway.lb.jdk.FairwayHttpClient;
import io.micrometer.core.instrument.MeterRegistry;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * {@code --client jdk}: the JDK's {@link HttpClient} behind Fairway's {@link FairwayHttpClient}, over
 * its own {@link LoadBalancer} (built by {@link ScenarioRun} as for OkHttp). The JDK client keeps every
 * idle HTTP/1.1 connection (its pool has no size limit by default) and runs its work on an executor
 * of this class's, which grows with the calls (as the default one does) and is shut down at {@link
 * #close}; so the client is never what limits the users.
 *
 * <p>With {@code --hedge}, the adapter hedges as the OkHttp interceptor does ({@code send} runs a
 * hedged call's race on the JDK's async path and waits). Retries and hedges are read from the
 * adapter's meters in the balancer's registry ({@code fairway.retries}, {@code
 * fairway.hedges{result=sent}}), as for OkHttp: they count the attempts on either path.
 */
final class JdkLabClient implements LabClient {
  /** The request's own timeout: the JDK client's only read timeout (OkHttp's is 60 s too). */
  static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(60);
  private static final URI WORK = URI.create("http://" + ScenarioRun.SERVICE + "/work");
  private static final AtomicInteger CLIENTS = new AtomicInteger();

  private final LoadBalancer balancer;
  private final MeterRegistry registry;
  private final ExecutorService executor;
  private final FairwayHttpClient client;

  /**
   * With {@code keyed} (the key strategies), each call's user header is its affinity key, as the
   * OkHttp client's interceptor reads it; with {@code hedging} (null: none), calls are hedged by
   * that policy. {@code registry} is the balancer's.
   */
  JdkLabClient(LoadBalancer balancer, MeterRegistry registry, int maxAttempts, boolean keyed, HedgingPolicy hedging) {
    this.balancer = balancer;
    this.registry = registry;
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
    FairwayHttpClient.Builder builder =
        FairwayHttpClient.builder(jdk).service(ScenarioRun.SERVICE, balancer).maxAttempts(maxAttempts);
    if (keyed) {
      builder.affinityKey(AffinityKey.header(ScenarioRun.USER_HEADER));
    }
    if (hedging != null) {
      builder.hedging(hedging);
    }
    this.client = builder.build();
  }

  @Override
  public Call caller(String user) {
    HttpRequest request =
        HttpRequest.newBuilder(WORK).header(ScenarioRun.USER_HEADER, user).timeout(REQUEST_TIMEOUT).GET().build();
    return () -> {
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

  /** The adapter's {@code fairway.retries} counter. */
  @Override
  public long retries() {
    return ScenarioRun.retriesCounted(registry);
  }

  /** The adapter's {@code fairway.hedges{result=sent}} counter. */
  @Override
  public long hedgesSent() {
    return ScenarioRun.hedgesCounted(registry);
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
}
