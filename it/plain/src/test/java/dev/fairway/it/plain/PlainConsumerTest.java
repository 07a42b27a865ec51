package dev.fairway.it.plain;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.PassiveHealth;
import dev.fairway.lb.Strategy;
import dev.fairway.lb.TargetState;
import dev.fairway.lb.TargetStatus;
import dev.fairway.lb.Target;
import dev.fairway.lb.consul.ConsulTargetSource;
import dev.fairway.lb.hc5.FairwayHttpClient5;
import dev.fairway.lb.jdk.FairwayHttpClient;
import dev.fairway.lb.okhttp.LoadBalancingInterceptor;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.apache.hc.client5.http.classic.methods.HttpGet;
import org.apache.hc.client5.http.impl.classic.CloseableHttpClient;
import org.apache.hc.client5.http.impl.classic.HttpClients;
import org.apache.hc.core5.http.io.entity.EntityUtils;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A plain Java application on Fairway's libraries and the oldest Resilience4j, Micrometer and
 * Jackson that Fairway supports: instances of "orders" listed by a Consul agent (an in-test fake of
 * Consul's health API on loopback), balanced by an OkHttp client through Fairway's interceptor, with
 * one listed instance refusing connections; and the same instances called through the JDK's
 * HttpClient and Apache HttpClient 5 (its oldest supported version) through Fairway's adapters.
 */
class PlainConsumerTest {
  private static final int CALLS = 12;
  private static final String LOAD_REPORT = "TEXT application_utilization=0.25, named_metrics.rif=1, named_metrics.workers=4";

  private final List<HttpServer> servers = new ArrayList<>();
  private final ExecutorService executor = Executors.newFixedThreadPool(8);
  private final CountDownLatch closing = new CountDownLatch(1);
  private final Map<String, AtomicInteger> served = new ConcurrentHashMap<>();
  private final List<AutoCloseable> closeables = new ArrayList<>();

  @AfterEach
  void stop() throws Exception {
    closing.countDown();
    for (int i = closeables.size() - 1; i >= 0; i--) {
      closeables.get(i).close();
    }
    servers.forEach(s -> s.stop(0));
    executor.shutdownNow();
    assertTrue(executor.awaitTermination(10, TimeUnit.SECONDS), "server threads stopped");
  }

  @Test
  void runsOnTheOldestSupportedVersions() {
    // The build pins the floor; this proves the floor is what runs (a BOM or a nearer dependency
    // could otherwise have lifted a version unseen).
    assertJar(CircuitBreakerConfig.class, "resilience4j-circuitbreaker-2.2.0.jar");
    assertJar(MeterRegistry.class, "micrometer-core-1.15.0.jar");
    assertJar(ObjectMapper.class, "jackson-databind-2.19.0.jar");
    assertJar(HttpClients.class, "httpclient5-5.4.4.jar");
    // The defaults build a breaker configuration with the floor's API (the NoClassDefFoundError of
    // issue 31 came from here).
    PassiveHealth.defaults();
  }

  @Test
  void consulListedInstances_areBalanced_theRefusingOneIsEjected_andLoadReportsAreRead() throws Exception {
    int a = startOrders("a");
    int b = startOrders("b");
    int refusing = refusingPort();
    int consul = startConsul(List.of(
        instance("orders-a", "node-1", a), instance("orders-b", "node-2", b), instance("orders-refusing", "node-3", refusing)));

    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    ConsulTargetSource source = ConsulTargetSource.builder("orders")
        .consulUrl("http://127.0.0.1:" + consul)
        .closeness(false)
        .meterRegistry(registry)
        .build();
    closeables.add(source);
    assertEquals(3, source.whenReady().get(30, TimeUnit.SECONDS).size(), "targets listed by Consul");

    LoadBalancer balancer = LoadBalancer.builder("orders")
        .targets(source)
        .strategy(Strategy.roundRobin())
        .passiveHealth(PassiveHealth.defaults())
        .meterRegistry(registry)
        .build();
    closeables.add(balancer);
    OkHttpClient client = new OkHttpClient.Builder()
        .addInterceptor(LoadBalancingInterceptor.builder().service("orders", balancer).build())
        .build();
    closeables.add(() -> {
      client.dispatcher().executorService().shutdown();
      client.connectionPool().evictAll();
    });

    for (int i = 0; i < CALLS; i++) {
      // The interceptor retries the refused attempt on another instance.
      try (Response response = client.newCall(new Request.Builder().url("http://orders/orders").build()).execute()) {
        assertEquals(200, response.code());
        String body = response.body().string();
        assertTrue(body.equals("a") || body.equals("b"), body);
      }
    }

    int servedA = served.get("a").get();
    int servedB = served.get("b").get();
    assertEquals(CALLS, servedA + servedB);
    assertTrue(Math.abs(servedA - servedB) <= 2, "round robin over a and b: a=" + servedA + " b=" + servedB);
    assertEquals(TargetState.EJECTED, status(balancer, refusing).state());
    assertEquals(TargetState.HEALTHY, status(balancer, a).state());
    // Every answer's endpoint-load-metrics header reached the interceptor and was parsed. (Whether
    // the balancer keeps a report depends on how plausible it is against its own timings, which a
    // loaded machine moves, so the kept values are not asserted.)
    assertEquals(CALLS, registry.get("fairway.load.reports").tag("service", "orders").tag("result", "parsed")
        .counter().count());
    // One ejection in all (the meter is per target: summed over the three).
    assertEquals(1.0, registry.get("fairway.ejections").tag("service", "orders").counters().stream()
        .mapToDouble(io.micrometer.core.instrument.Counter::count).sum());
  }

  @Test
  void jdkAndApacheClients_balance_retryTheRefusedCall_andEjectTheRefusingInstance() throws Exception {
    int a = startOrders("a");
    int b = startOrders("b");
    int refusing = refusingPort();
    for (String client : List.of("jdk", "hc5")) {
      served.get("a").set(0);
      served.get("b").set(0);
      LoadBalancer balancer = LoadBalancer.builder("orders")
          .targets(Target.of("127.0.0.1", a), Target.of("127.0.0.1", b), Target.of("127.0.0.1", refusing))
          .strategy(Strategy.roundRobin())
          .build();
      closeables.add(balancer);
      HttpClient jdk = FairwayHttpClient.builder(HttpClient.newHttpClient()).service("orders", balancer).build();
      CloseableHttpClient hc5 = FairwayHttpClient5.builder().service("orders", balancer).build()
          .customize(HttpClients.custom()).build();
      closeables.add(hc5);
      for (int i = 0; i < CALLS; i++) {
        String body = client.equals("jdk")
            ? jdk.send(HttpRequest.newBuilder(URI.create("http://orders/orders")).build(),
                HttpResponse.BodyHandlers.ofString()).body()
            : hc5.execute(new HttpGet("http://orders/orders"), r -> EntityUtils.toString(r.getEntity()));
        assertTrue(body.equals("a") || body.equals("b"), client + ": " + body);
      }
      assertEquals(CALLS, served.get("a").get() + served.get("b").get(), client);
      assertEquals(TargetState.EJECTED, status(balancer, refusing).state(), client);
      assertEquals(TargetState.HEALTHY, status(balancer, a).state(), client);
    }
  }

  private static TargetStatus status(LoadBalancer balancer, int port) {
    return balancer.status().stream().filter(s -> s.target().port() == port).findFirst().orElseThrow();
  }

  private static void assertJar(Class<?> type, String jar) {
    String location = type.getProtectionDomain().getCodeSource().getLocation().getPath();
    assertTrue(location.endsWith("/" + jar), type.getName() + " comes from " + location + ", expected " + jar);
  }

  private int startOrders(String name) throws IOException {
    served.put(name, new AtomicInteger());
    return start(exchange -> {
      served.get(name).incrementAndGet();
      exchange.getResponseHeaders().set("endpoint-load-metrics", LOAD_REPORT);
      reply(exchange, 200, name, -1);
    });
  }

  /**
   * Consul's {@code /v1/health/service/orders}: the list at index 7; a blocking query for index 7 is
   * held (up to its wait) and answered with the same list, as an agent with no change does.
   */
  private int startConsul(List<String> entries) throws IOException {
    String body = "[" + String.join(",", entries) + "]";
    return start(exchange -> {
      String path = exchange.getRequestURI().getPath();
      if (!path.equals("/v1/health/service/orders")) {
        reply(exchange, 404, "no such path", 0);
        return;
      }
      String query = exchange.getRequestURI().getRawQuery();
      if (query != null && query.contains("index=7")) {
        try {
          closing.await(1, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      reply(exchange, 200, body, 7);
    });
  }

  /** One entry of Consul's health API reply, in the shape an agent sends. */
  private static String instance(String id, String node, int port) {
    return """
        {"Node":{"ID":"%s","Node":"%s","Address":"127.0.0.1","Datacenter":"dc1",\
        "TaggedAddresses":{"lan":"127.0.0.1","wan":"127.0.0.1"},"Meta":{"consul-network-segment":""},\
        "CreateIndex":5,"ModifyIndex":5},\
        "Service":{"ID":"%s","Service":"orders","Tags":[],"Address":"127.0.0.1","Meta":{"zone":""},\
        "Port":%d,"Weights":{"Passing":1,"Warning":1},"EnableTagOverride":false,"CreateIndex":6,"ModifyIndex":6},\
        "Checks":[{"Node":"%s","CheckID":"serfHealth","Name":"Serf Health Status","Status":"passing",\
        "Notes":"","Output":"","ServiceID":"","ServiceName":"","ServiceTags":[]},\
        {"Node":"%s","CheckID":"service:%s","Name":"Service 'orders' check","Status":"passing",\
        "Notes":"","Output":"","ServiceID":"%s","ServiceName":"orders","ServiceTags":[]}]}"""
        .formatted(java.util.UUID.nameUUIDFromBytes(node.getBytes(UTF_8)), node, id, port, node, node, id, id);
  }

  private int start(com.sun.net.httpserver.HttpHandler handler) throws IOException {
    HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 50);
    server.createContext("/", handler);
    server.setExecutor(executor);
    server.start();
    servers.add(server);
    return server.getAddress().getPort();
  }

  private static void reply(HttpExchange exchange, int status, String body, long consulIndex) throws IOException {
    byte[] bytes = body.getBytes(UTF_8);
    exchange.getResponseHeaders().set("Content-Type", "application/json");
    if (consulIndex > 0) {
      exchange.getResponseHeaders().set("X-Consul-Index", Long.toString(consulIndex));
    }
    exchange.sendResponseHeaders(status, bytes.length);
    try (OutputStream out = exchange.getResponseBody()) {
      out.write(bytes);
    }
  }

  /** A loopback port that was just free: nothing listens there, so a connect is refused. */
  private static int refusingPort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return socket.getLocalPort();
    }
  }
}
