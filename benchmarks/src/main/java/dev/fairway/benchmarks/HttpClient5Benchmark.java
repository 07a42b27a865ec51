package dev.fairway.benchmarks;

import com.sun.net.httpserver.HttpServer;
import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.Target;
import dev.fairway.lb.hc5.FairwayHttpClient5;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.apache.hc.client5.http.classic.ExecChainHandler;
import org.apache.hc.client5.http.classic.methods.HttpGet;
import org.apache.hc.client5.http.impl.ChainElement;
import org.apache.hc.client5.http.impl.classic.CloseableHttpClient;
import org.apache.hc.client5.http.impl.classic.HttpClientBuilder;
import org.apache.hc.client5.http.impl.classic.HttpClients;
import org.apache.hc.core5.http.ClassicHttpResponse;
import org.apache.hc.core5.http.ContentType;
import org.apache.hc.core5.http.io.entity.BasicHttpEntity;
import org.apache.hc.core5.http.io.entity.EntityUtils;
import org.apache.hc.core5.http.message.BasicClassicHttpResponse;
import org.apache.hc.core5.io.CloseMode;
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
 * What {@link FairwayHttpClient5} adds to a call of Apache HttpClient 5's classic client, beside
 * {@link JdkHttpClientBenchmark} (the JDK adapter) and {@link InterceptorBenchmark} (lb-okhttp).
 *
 * <ul>
 *   <li>{@code plainGet} / {@code balancedGet}: an HTTP/1.1 GET over loopback to an in-process JDK
 *       {@code HttpServer} (TCP_NODELAY on, keep-alive, a 2-byte body read as a String). The plain
 *       client calls {@code http://127.0.0.1:port/hello}; the balanced one calls {@code
 *       http://orders/hello} through a client that {@code FairwayHttpClient5.customize} set up, sent
 *       to one of 4 targets that are all that server (distinct ids, one address). The balancer uses
 *       the defaults a user gets; so do both clients.
 *   <li>{@code plainNoNetwork} / {@code balancedNoNetwork}: the same calls answered at once by a
 *       canned element placed just before {@code CONNECT} in each client's exec chain: it returns
 *       200 with a streaming 2-byte entity (a {@code BasicHttpEntity} over a byte stream, as a real
 *       response's is streaming) on the calling thread, so no connection is leased and no socket is
 *       touched. Both clients run HttpClient's own elements above it ({@code REDIRECT}, {@code
 *       RETRY}, {@code PROTOCOL}); the difference is the adapter alone (the request for the
 *       target, the attempt's route and scope, the pick, the small entity read inside the attempt,
 *       the tracked entity and the completion when it is consumed).
 * </ul>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@Fork(value = 2, jvmArgsAppend = {"-Xms1g", "-Xmx1g", "-Xmn128m", "-Dsun.net.httpserver.nodelay=true"})
@Warmup(iterations = 5, time = 1, timeUnit = TimeUnit.SECONDS)
@Measurement(iterations = 8, time = 250, timeUnit = TimeUnit.MILLISECONDS)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class HttpClient5Benchmark {
  private static final byte[] BODY = "ok".getBytes(StandardCharsets.US_ASCII);
  private static final String CANNED = "canned";

  HttpServer server;
  ExecutorService serverThreads;
  LoadBalancer balancer;
  CloseableHttpClient plain;
  CloseableHttpClient balanced;
  CloseableHttpClient plainCanned;
  CloseableHttpClient balancedCanned;
  String plainUri;
  String balancedUri;

  @Setup
  public void setUp() throws IOException {
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
    FairwayHttpClient5 fairway = FairwayHttpClient5.builder().service("orders", balancer).build();
    plain = HttpClients.custom().build();
    balanced = fairway.customize(HttpClients.custom()).build();
    plainCanned = canned(HttpClients.custom()).build();
    balancedCanned = canned(fairway.customize(HttpClients.custom())).build();

    plainUri = "http://127.0.0.1:" + port + "/hello";
    balancedUri = "http://orders/hello";
    for (int i = 0; i < 200; i++) {
      call(plain, plainUri);
      call(balanced, balancedUri);
      call(plainCanned, plainUri);
      call(balancedCanned, balancedUri);
    }
  }

  @TearDown
  public void tearDown() {
    plain.close(CloseMode.IMMEDIATE);
    balanced.close(CloseMode.IMMEDIATE);
    plainCanned.close(CloseMode.IMMEDIATE);
    balancedCanned.close(CloseMode.IMMEDIATE);
    server.stop(0);
    serverThreads.shutdownNow();
    balancer.close();
  }

  /** {@code builder} with the canned element just before {@code CONNECT}: every request is answered there. */
  static HttpClientBuilder canned(HttpClientBuilder builder) {
    ExecChainHandler answer = (request, scope, chain) -> {
      if (scope.route.getTargetHost().getHostName().equals("orders")) {
        throw new IOException("not balanced: the route still names the logical host");
      }
      ClassicHttpResponse response = new BasicClassicHttpResponse(200);
      response.setEntity(new BasicHttpEntity(new ByteArrayInputStream(BODY), BODY.length, ContentType.TEXT_PLAIN));
      return response;
    };
    return builder.addExecInterceptorBefore(ChainElement.CONNECT.name(), CANNED, answer);
  }

  /** One GET (a request is mutable: a new one per call, as callers make them), its body read as a String. */
  static int call(CloseableHttpClient client, String uri) throws IOException {
    return client.execute(new HttpGet(uri), response -> {
      if (response.getCode() != 200) {
        throw new IOException("unexpected status " + response.getCode());
      }
      return EntityUtils.toString(response.getEntity()).length();
    });
  }

  @Benchmark
  public int plainGet() throws IOException {
    return call(plain, plainUri);
  }

  @Benchmark
  public int balancedGet() throws IOException {
    return call(balanced, balancedUri);
  }

  @Benchmark
  public int plainNoNetwork() throws IOException {
    return call(plainCanned, plainUri);
  }

  @Benchmark
  public int balancedNoNetwork() throws IOException {
    return call(balancedCanned, balancedUri);
  }
}
