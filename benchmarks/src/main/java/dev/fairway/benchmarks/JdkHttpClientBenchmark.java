package dev.fairway.benchmarks;

import com.sun.net.httpserver.HttpServer;
import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.Target;
import dev.fairway.lb.jdk.FairwayHttpClient;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Authenticator;
import java.net.CookieHandler;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ProxySelector;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpHeaders;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpResponse.BodyHandlers;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Flow;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSession;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What {@link FairwayHttpClient} adds to a call of the JDK's {@code java.net.http.HttpClient}.
 *
 * <ul>
 *   <li>{@code plainGet} / {@code balancedGet}: an HTTP/1.1 GET over loopback to an in-process JDK
 *       {@code HttpServer} (TCP_NODELAY on, keep-alive, a 2-byte body read as a String). The plain
 *       client calls {@code http://127.0.0.1:port/hello}; the balanced one calls {@code
 *       http://orders/hello} through a {@code FairwayHttpClient} over the same kind of client, sent
 *       to one of 4 targets that are all that server (distinct ids, one address). The balancer uses
 *       the defaults a user gets.
 *   <li>{@code plainNoNetwork} / {@code balancedNoNetwork}: the same calls answered at once by a
 *       canned client (an {@code HttpClient} whose {@code send} feeds a 2-byte body to the caller's
 *       handler on the calling thread), so no socket and no JDK client machinery is involved: the
 *       difference is the adapter alone (the routed request, the pick, the wrapped handler and
 *       subscriber, the completion when the body is consumed).
 *   <li>{@code balancedNoNetworkDistinctPaths}: as {@code balancedNoNetwork}, cycling through 16
 *       requests with distinct paths, so a target is almost never sent the URI it routed last:
 *       each call parses its routed URI (the adapter caches only the last one per target).
 *   <li>{@code balancedAsyncNoNetwork}: {@code sendAsync} through the adapter over the canned client.
 * </ul>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@Fork(value = 2, jvmArgsAppend = {"-Xms1g", "-Xmx1g", "-Xmn128m", "-Dsun.net.httpserver.nodelay=true"})
@Warmup(iterations = 5, time = 1, timeUnit = TimeUnit.SECONDS)
@Measurement(iterations = 8, time = 250, timeUnit = TimeUnit.MILLISECONDS)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class JdkHttpClientBenchmark {
  private static final byte[] BODY = "ok".getBytes(StandardCharsets.US_ASCII);

  HttpServer server;
  ExecutorService serverThreads;
  LoadBalancer balancer;
  HttpClient plain;
  HttpClient balanced;
  HttpClient plainCanned;
  HttpClient balancedCanned;
  HttpRequest plainRequest;
  HttpRequest balancedRequest;
  HttpRequest[] distinctPaths;
  int next;

  @Setup
  public void setUp() throws IOException, InterruptedException {
    System.setProperty("sun.net.httpserver.nodelay", "true");
    server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 64);
    server.createContext("/", exchange -> {
      try (InputStream in = exchange.getRequestBody()) {
        in.readAllBytes();
      }
      exchange.sendResponseHeaders(200, BODY.length);
      try (OutputStream out = exchange.getResponseBody()) {
        out.write(BODY);
      }
    });
    serverThreads = Executors.newFixedThreadPool(2);
    server.setExecutor(serverThreads);
    server.start();
    int port = server.getAddress().getPort();

    Target base = Target.of("127.0.0.1", port);
    balancer = LoadBalancer.builder("orders")
        .targets(base.withId("a"), base.withId("b"), base.withId("c"), base.withId("d"))
        .build();
    plain = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    balanced = FairwayHttpClient.builder(HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build())
        .service("orders", balancer).build();
    plainCanned = new CannedHttpClient();
    balancedCanned = FairwayHttpClient.builder(new CannedHttpClient()).service("orders", balancer).build();

    plainRequest = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/hello")).build();
    balancedRequest = HttpRequest.newBuilder(URI.create("http://orders/hello")).build();
    distinctPaths = new HttpRequest[16];
    for (int i = 0; i < distinctPaths.length; i++) {
      distinctPaths[i] = HttpRequest.newBuilder(URI.create("http://orders/api/orders/" + (1000 + i))).build();
    }
    for (int i = 0; i < 200; i++) {
      call(plain, plainRequest);
      call(balanced, balancedRequest);
    }
  }

  @TearDown
  public void tearDown() {
    server.stop(0);
    serverThreads.shutdownNow();
    balancer.close();
  }

  static int call(HttpClient client, HttpRequest request) throws IOException, InterruptedException {
    HttpResponse<String> response = client.send(request, BodyHandlers.ofString());
    if (response.statusCode() != 200) {
      throw new IOException("unexpected status " + response.statusCode());
    }
    return response.body().length();
  }

  @Benchmark
  public int plainGet() throws IOException, InterruptedException {
    return call(plain, plainRequest);
  }

  @Benchmark
  public int balancedGet() throws IOException, InterruptedException {
    return call(balanced, balancedRequest);
  }

  @Benchmark
  public int plainNoNetwork() throws IOException, InterruptedException {
    return call(plainCanned, plainRequest);
  }

  @Benchmark
  public int balancedNoNetwork() throws IOException, InterruptedException {
    return call(balancedCanned, balancedRequest);
  }

  @Benchmark
  public int balancedNoNetworkDistinctPaths() throws IOException, InterruptedException {
    next = (next + 1) & 15;
    return call(balancedCanned, distinctPaths[next]);
  }

  @Benchmark
  public int balancedAsyncNoNetwork() throws InterruptedException, ExecutionException {
    return balancedCanned.sendAsync(balancedRequest, BodyHandlers.ofString()).get().body().length();
  }

  /**
   * Answers every request at once with 200 and a 2-byte body, on the calling thread, through the
   * caller's handler and subscriber as the JDK's client would: no socket, no executor.
   */
  static final class CannedHttpClient extends HttpClient {
    private static final HttpHeaders HEADERS = HttpHeaders.of(Map.of("content-length", List.of("2")), (n, v) -> true);

    @Override
    public <T> HttpResponse<T> send(HttpRequest request, HttpResponse.BodyHandler<T> handler) throws IOException {
      HttpResponse.BodySubscriber<T> subscriber = handler.apply(new HttpResponse.ResponseInfo() {
        @Override
        public int statusCode() {
          return 200;
        }

        @Override
        public HttpHeaders headers() {
          return HEADERS;
        }

        @Override
        public Version version() {
          return Version.HTTP_1_1;
        }
      });
      subscriber.onSubscribe(new Flow.Subscription() {
        @Override
        public void request(long n) {}

        @Override
        public void cancel() {}
      });
      subscriber.onNext(List.of(ByteBuffer.wrap(BODY)));
      subscriber.onComplete();
      T body = subscriber.getBody().toCompletableFuture().join();
      return new CannedResponse<>(request, body);
    }

    @Override
    public <T> CompletableFuture<HttpResponse<T>> sendAsync(HttpRequest request, HttpResponse.BodyHandler<T> handler) {
      try {
        return CompletableFuture.completedFuture(send(request, handler));
      } catch (IOException e) {
        return CompletableFuture.failedFuture(e);
      }
    }

    @Override
    public <T> CompletableFuture<HttpResponse<T>> sendAsync(HttpRequest request, HttpResponse.BodyHandler<T> handler,
        HttpResponse.PushPromiseHandler<T> pushPromiseHandler) {
      return sendAsync(request, handler);
    }

    @Override
    public Optional<CookieHandler> cookieHandler() {
      return Optional.empty();
    }

    @Override
    public Optional<Duration> connectTimeout() {
      return Optional.empty();
    }

    @Override
    public Redirect followRedirects() {
      return Redirect.NEVER;
    }

    @Override
    public Optional<ProxySelector> proxy() {
      return Optional.empty();
    }

    @Override
    public SSLContext sslContext() {
      throw new UnsupportedOperationException();
    }

    @Override
    public SSLParameters sslParameters() {
      throw new UnsupportedOperationException();
    }

    @Override
    public Optional<Authenticator> authenticator() {
      return Optional.empty();
    }

    @Override
    public Version version() {
      return Version.HTTP_1_1;
    }

    @Override
    public Optional<Executor> executor() {
      return Optional.empty();
    }
  }

  private record CannedResponse<T>(HttpRequest request, T body) implements HttpResponse<T> {
    @Override
    public int statusCode() {
      return 200;
    }

    @Override
    public Optional<HttpResponse<T>> previousResponse() {
      return Optional.empty();
    }

    @Override
    public HttpHeaders headers() {
      return CannedHttpClient.HEADERS;
    }

    @Override
    public Optional<SSLSession> sslSession() {
      return Optional.empty();
    }

    @Override
    public URI uri() {
      return request.uri();
    }

    @Override
    public HttpClient.Version version() {
      return HttpClient.Version.HTTP_1_1;
    }
  }
}
