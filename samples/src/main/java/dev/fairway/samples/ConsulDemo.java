package dev.fairway.samples;

import com.sun.net.httpserver.HttpServer;
import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.Strategy;
import dev.fairway.lb.Target;
import dev.fairway.lb.consul.ConsulTargetSource;
import dev.fairway.lb.okhttp.LoadBalancingInterceptor;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;

/**
 * Targets from Consul: starts three local backends, registers them with the Consul agent at
 * {@code $CONSUL_HTTP_ADDR} (default {@code http://127.0.0.1:8500}) as service
 * {@code fairway-demo} with an HTTP check, balances ten calls over what Consul reports, deregisters
 * one instance and shows the next calls avoid it, then deregisters everything it registered.
 *
 * <p>Without a reachable agent it says so and how to start one ({@code consul agent -dev}).
 */
public final class ConsulDemo {
  static final String SERVICE = "fairway-demo";
  private static final MediaType JSON = MediaType.get("application/json");

  private ConsulDemo() {}

  public static void main(String[] args) {
    System.exit(run(System.getenv("CONSUL_HTTP_ADDR"), System.getenv("CONSUL_HTTP_TOKEN"), System.out));
  }

  /** Runs the demo against {@code address} (null: the default); returns the process exit code. */
  public static int run(String address, String token, PrintStream out) {
    System.setProperty("sun.net.httpserver.nodelay", "true");
    String url = normalize(address);
    OkHttpClient http = new OkHttpClient.Builder().callTimeout(Duration.ofSeconds(3)).build();
    try {
      if (!reachable(http, url, token)) {
        out.println("consul-demo needs a running Consul agent, and none answered at " + url + ".");
        out.println("Start a throwaway one in another terminal:");
        out.println("    consul agent -dev            # serves http://127.0.0.1:8500");
        out.println("then run again (set CONSUL_HTTP_ADDR if the agent is elsewhere, CONSUL_HTTP_TOKEN if ACLs are on):");
        out.println("    CONSUL_HTTP_ADDR=http://127.0.0.1:8500 java -jar samples/target/fairway-samples.jar consul-demo");
        return 1;
      }
      out.println("Consul agent at " + url);
      return demo(url, token, new AgentRegistry(http, url, token), out);
    } catch (IOException | RuntimeException e) {
      out.println("consul-demo failed: " + e);
      return 1;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return 1;
    } finally {
      http.dispatcher().executorService().shutdown();
      http.connectionPool().evictAll();
    }
  }

  static String normalize(String address) {
    String a = address == null || address.isBlank() ? "http://127.0.0.1:8500" : address.trim();
    if (!a.startsWith("http://") && !a.startsWith("https://")) {
      a = "http://" + a; // CONSUL_HTTP_ADDR is often host:port
    }
    return a.endsWith("/") ? a.substring(0, a.length() - 1) : a;
  }

  /** Whether the agent answers the health API the demo reads. */
  private static boolean reachable(OkHttpClient http, String url, String token) {
    try (Response r = http.newCall(request(url + "/v1/health/service/" + SERVICE, token).build()).execute()) {
      return r.isSuccessful();
    } catch (IOException | IllegalArgumentException e) {
      return false;
    }
  }

  /** Where the demo registers its instances: the agent's HTTP API, or a test's fake. */
  interface Registry {
    void register(String id, int port) throws IOException;

    void deregister(String id) throws IOException;
  }

  /** {@code PUT /v1/agent/service/register} with an HTTP check, and {@code .../deregister/<id>}. */
  private static final class AgentRegistry implements Registry {
    private final OkHttpClient http;
    private final String url;
    private final String token;

    AgentRegistry(OkHttpClient http, String url, String token) {
      this.http = http;
      this.url = url;
      this.token = token;
    }

    @Override
    public void register(String id, int port) throws IOException {
      String json = "{\"ID\":\"" + id + "\",\"Name\":\"" + SERVICE + "\",\"Address\":\"127.0.0.1\",\"Port\":" + port
          + ",\"Meta\":{\"zone\":\"local\"},\"Check\":{\"HTTP\":\"http://127.0.0.1:" + port
          + "/health\",\"Interval\":\"1s\",\"DeregisterCriticalServiceAfter\":\"1m\"}}";
      put(http, url + "/v1/agent/service/register", token, json);
    }

    @Override
    public void deregister(String id) throws IOException {
      put(http, url + "/v1/agent/service/deregister/" + id, token, "");
    }
  }

  /**
   * Starts three backends, registers them, balances calls over what Consul reports, deregisters one
   * and balances again; deregisters what is left at the end. Returns the exit code.
   */
  static int demo(String url, String token, Registry registry, PrintStream out)
      throws IOException, InterruptedException {
    List<HttpServer> backends = new ArrayList<>();
    List<String> registered = new ArrayList<>();
    try {
      for (int i = 1; i <= 3; i++) {
        HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        String name = "instance-" + i;
        server.createContext("/", exchange -> {
          byte[] body = ("hello from " + name + "\n").getBytes(StandardCharsets.UTF_8);
          exchange.sendResponseHeaders(200, body.length);
          try (exchange) {
            exchange.getResponseBody().write(body);
          }
        });
        server.start();
        backends.add(server);
        String id = SERVICE + "-" + i;
        int port = server.getAddress().getPort();
        registry.register(id, port);
        registered.add(id);
        out.println("registered " + id + " at 127.0.0.1:" + port);
      }

      ConsulTargetSource.Builder source = ConsulTargetSource.builder(SERVICE).consulUrl(url);
      if (token != null && !token.isBlank()) {
        source.token(token);
      }
      try (ConsulTargetSource targets = source.build();
          LoadBalancer lb = LoadBalancer.builder(SERVICE).targets(targets).strategy(Strategy.roundRobin()).build()) {
        out.println("waiting for Consul to report all 3 instances passing their checks...");
        if (!await(targets, 3, Duration.ofSeconds(20))) {
          out.println("Consul reports " + targets.targets().size() + " healthy instances after 20 s; giving up.");
          return 1;
        }
        OkHttpClient client = new OkHttpClient.Builder()
            .addInterceptor(LoadBalancingInterceptor.builder().service(SERVICE, lb).build())
            .build();
        try {
          calls(client, out, 6);
          String gone = registered.remove(0);
          registry.deregister(gone);
          out.println("deregistered " + gone + "; Consul tells the balancer through its blocking query...");
          if (!await(targets, 2, Duration.ofSeconds(20))) {
            out.println("the list did not shrink within 20 s");
            return 1;
          }
          calls(client, out, 4);
        } finally {
          client.dispatcher().executorService().shutdown();
          client.connectionPool().evictAll();
        }
      }
      return 0;
    } finally {
      for (String id : registered) {
        try {
          registry.deregister(id);
        } catch (IOException e) {
          out.println("could not deregister " + id + ": " + e.getMessage());
        }
      }
      for (HttpServer server : backends) {
        server.stop(0);
      }
    }
  }

  private static void calls(OkHttpClient client, PrintStream out, int n) throws IOException {
    for (int i = 0; i < n; i++) {
      try (Response r = client.newCall(new Request.Builder().url("http://" + SERVICE + "/hello").build()).execute()) {
        out.printf("  GET http://%s/hello -> 127.0.0.1:%d  %s%n", SERVICE, r.request().url().port(),
            r.body().string().trim());
      }
    }
  }

  private static boolean await(ConsulTargetSource source, int count, Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() < deadline) {
      List<Target> now = source.targets();
      if (now.size() == count) {
        return true;
      }
      TimeUnit.MILLISECONDS.sleep(100);
    }
    return false;
  }

  private static void put(OkHttpClient http, String url, String token, String json) throws IOException {
    try (Response r = http.newCall(request(url, token).put(RequestBody.create(json, JSON)).build()).execute()) {
      if (!r.isSuccessful()) {
        throw new IOException("PUT " + url + " -> HTTP " + r.code() + ": " + r.body().string());
      }
    }
  }

  private static Request.Builder request(String url, String token) {
    Request.Builder b = new Request.Builder().url(url);
    if (token != null && !token.isBlank()) {
      b.header("X-Consul-Token", token);
    }
    return b;
  }
}
