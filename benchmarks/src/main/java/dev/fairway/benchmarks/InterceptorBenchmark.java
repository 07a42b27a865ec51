package dev.fairway.benchmarks;

import com.sun.net.httpserver.HttpServer;
import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.Target;
import dev.fairway.lb.HedgingPolicy;
import dev.fairway.lb.okhttp.LoadBalancingInterceptor;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import kotlin.jvm.JvmClassMappingKt;
import kotlin.jvm.functions.Function0;
import kotlin.reflect.KClass;
import okhttp3.Call;
import okhttp3.ConnectionPool;
import okhttp3.Interceptor;
import okhttp3.OkHttpClient;
import okhttp3.Protocol;
import okhttp3.Request;
import okhttp3.Response;
import okhttp3.ResponseBody;
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
 * What {@link LoadBalancingInterceptor} adds to an OkHttp call.
 *
 * <ul>
 *   <li>{@code plainGet} / {@code balancedGet}: an HTTP/1.1 GET over loopback to an in-process JDK
 *       {@code HttpServer} (TCP_NODELAY on, keep-alive, a 2-byte body read to the end). The plain
 *       client calls {@code http://127.0.0.1:port/hello}; the balanced one calls
 *       {@code http://orders/hello} and the interceptor sends it to one of 4 targets, all on that
 *       server (distinct ids, one address, so both clients share one pooled connection's worth of
 *       work). Both clients: same connection pool size, same dispatcher, default timeouts; the
 *       balancer uses the defaults a user gets (least queueing, default passive health).
 *   <li>{@code plainNoNetwork} / {@code balancedNoNetwork}: the same calls answered by a last
 *       application interceptor with a canned 200 response, so no socket is involved: the
 *       difference is the interceptor alone (URL rewrite, pick, response tracking, completion when
 *       the body is read), free of loopback noise.
 *   <li>{@code hedgedNoNetwork}: as {@code balancedNoNetwork} through an interceptor with hedging
 *       on, its delay so long (1 h) that no hedge is ever sent: what hedging costs every call that
 *       does not need a hedge (the clone of the call, the hedge timer set and cancelled, the
 *       listener on the caller's call). Hedges themselves are not measured here.
 *   <li>{@code clonedNoNetwork}: as {@code plainNoNetwork} with a first interceptor that sends
 *       each call as a tagged clone ({@code call.clone()}, one tag, {@code execute()}), the way
 *       hedging sends its first copy, and nothing of Fairway's: OkHttp's own share of {@code
 *       hedgedNoNetwork} minus {@code balancedNoNetwork}, the least any hedging that gives each
 *       copy a call of its own can allocate.
 * </ul>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@Fork(value = 2, jvmArgsAppend = {"-Xms1g", "-Xmx1g", "-Xmn128m", "-Dsun.net.httpserver.nodelay=true"})
// The balanced path (OkHttp, IDN host canonicalisation, Resilience4j) takes seconds of warm-up to
// reach C2 code; 2 x 250 ms measured C1 code (7.7 -> 1.8 us/op across the measurement).
@Warmup(iterations = 5, time = 1, timeUnit = TimeUnit.SECONDS)
@Measurement(iterations = 8, time = 100, timeUnit = TimeUnit.MILLISECONDS)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class InterceptorBenchmark {
  private static final byte[] BODY = "ok".getBytes(StandardCharsets.US_ASCII);

  HttpServer server;
  ExecutorService serverThreads;
  LoadBalancer balancer;
  OkHttpClient plain;
  OkHttpClient balanced;
  OkHttpClient plainCanned;
  OkHttpClient balancedCanned;
  OkHttpClient hedgedCanned;
  OkHttpClient hedgedPercentileCanned;
  OkHttpClient clonedCanned;
  Request plainRequest;
  Request balancedRequest;

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
    balancer =
        LoadBalancer.builder("orders")
            .targets(base.withId("a"), base.withId("b"), base.withId("c"), base.withId("d"))
            .build();
    LoadBalancingInterceptor interceptor = LoadBalancingInterceptor.builder().service("orders", balancer).build();

    OkHttpClient base0 = new OkHttpClient.Builder().connectionPool(new ConnectionPool(5, 5, TimeUnit.MINUTES)).build();
    plain = base0.newBuilder().connectionPool(new ConnectionPool(5, 5, TimeUnit.MINUTES)).build();
    balanced =
        base0.newBuilder().connectionPool(new ConnectionPool(5, 5, TimeUnit.MINUTES)).addInterceptor(interceptor).build();
    Interceptor canned = InterceptorBenchmark::canned;
    plainCanned = base0.newBuilder().addInterceptor(canned).build();
    balancedCanned = base0.newBuilder().addInterceptor(interceptor).addInterceptor(canned).build();
    LoadBalancingInterceptor hedging = LoadBalancingInterceptor.builder().service("orders", balancer)
        .hedging(HedgingPolicy.fixedDelay(Duration.ofHours(1))).build();
    hedgedCanned = base0.newBuilder().addInterceptor(hedging).addInterceptor(canned).build();
    LoadBalancingInterceptor percentile = LoadBalancingInterceptor.builder().service("orders", balancer)
        .hedging(HedgingPolicy.percentile(99.9)).build();
    hedgedPercentileCanned = base0.newBuilder().addInterceptor(percentile).addInterceptor(canned).build();
    clonedCanned = base0.newBuilder().addInterceptor(InterceptorBenchmark::asClone).addInterceptor(canned).build();

    plainRequest = new Request.Builder().url("http://127.0.0.1:" + port + "/hello").build();
    balancedRequest = new Request.Builder().url("http://orders/hello").build();
    for (int i = 0; i < 200; i++) {
      call(plain, plainRequest);
      call(balanced, balancedRequest);
      call(hedgedPercentileCanned, balancedRequest); // fills the percentile windows
    }
  }

  private static Response canned(Interceptor.Chain chain) {
    return new Response.Builder()
        .request(chain.request())
        .protocol(Protocol.HTTP_1_1)
        .code(200)
        .message("OK")
        .body(ResponseBody.create(BODY, null))
        .build();
  }

  /** The tag of {@code clonedNoNetwork}'s clones; its own supplier, keyed by one {@code KClass}. */
  private static final class CloneMark implements Function0<CloneMark> {
    static final CloneMark INSTANCE = new CloneMark();
    static final KClass<CloneMark> KEY = JvmClassMappingKt.getKotlinClass(CloneMark.class);

    @Override
    public CloneMark invoke() {
      return this;
    }
  }

  /** Sends an untagged call as a tagged clone; the clone goes on down the chain. */
  private static Response asClone(Interceptor.Chain chain) throws IOException {
    if (chain.call().tag(CloneMark.KEY) != null) {
      return chain.proceed(chain.request());
    }
    Call clone = chain.call().clone();
    clone.tag(CloneMark.KEY, CloneMark.INSTANCE);
    return clone.execute();
  }

  @TearDown
  public void tearDown() {
    for (OkHttpClient c : new OkHttpClient[] {plain, balanced}) {
      c.connectionPool().evictAll();
      c.dispatcher().executorService().shutdown();
    }
    server.stop(0);
    serverThreads.shutdownNow();
    balancer.close();
  }

  static int call(OkHttpClient client, Request request) throws IOException {
    try (Response response = client.newCall(request).execute()) {
      if (response.code() != 200) {
        throw new IOException("unexpected status " + response.code());
      }
      return response.body().bytes().length;
    }
  }

  @Benchmark
  public int plainGet() throws IOException {
    return call(plain, plainRequest);
  }

  @Benchmark
  public int balancedGet() throws IOException {
    return call(balanced, balancedRequest);
  }

  @Benchmark
  public int plainNoNetwork() throws IOException {
    return call(plainCanned, plainRequest);
  }

  @Benchmark
  public int balancedNoNetwork() throws IOException {
    return call(balancedCanned, balancedRequest);
  }

  @Benchmark
  public int hedgedNoNetwork() throws IOException {
    return call(hedgedCanned, balancedRequest);
  }

  @Benchmark
  public int clonedNoNetwork() throws IOException {
    return call(clonedCanned, plainRequest);
  }

  /**
   * As {@code hedgedNoNetwork} with a percentile delay (p99.9, at least 1 ms, far above a canned
   * answer): every call also records its response time into the latency window(s).
   */
  @Benchmark
  public int hedgedPercentileNoNetwork() throws IOException {
    return call(hedgedPercentileCanned, balancedRequest);
  }
}
