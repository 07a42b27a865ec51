package dev.fairway.samples;

import com.sun.net.httpserver.HttpServer;
import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.Strategy;
import dev.fairway.lb.Target;
import dev.fairway.lb.okhttp.LoadBalancingInterceptor;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;

/**
 * The README's quickstart as a program: three local backends, one OkHttp client with the
 * interceptor, ten calls to the logical host {@code http://greeter/hello}, each printed with the
 * backend that served it.
 */
public final class Quickstart {
  private Quickstart() {}

  public static void main(String[] args) throws IOException {
    System.setProperty("sun.net.httpserver.nodelay", "true"); // before the first server starts
    run(System.out);
  }

  /** Runs the quickstart, printing to {@code out}; returns the port of the backend that served each call. */
  public static List<Integer> run(PrintStream out) throws IOException {
    List<HttpServer> backends = new ArrayList<>();
    try {
      // 1. Three backends on ports the OS picks; each says who it is.
      Target[] targets = new Target[3];
      for (int i = 0; i < 3; i++) {
        HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        String name = "backend-" + (i + 1);
        server.createContext("/hello", exchange -> {
          byte[] body = ("hello from " + name + "\n").getBytes(StandardCharsets.UTF_8);
          exchange.sendResponseHeaders(200, body.length);
          try (exchange) {
            exchange.getResponseBody().write(body);
          }
        });
        server.start();
        backends.add(server);
        targets[i] = Target.of("127.0.0.1", server.getAddress().getPort());
      }

      // 2. A balancer for the logical service "greeter" and an interceptor that routes to it.
      //    (Without .strategy(...) you get leastResponseTime; round robin makes the rotation visible.)
      LoadBalancer greeter = LoadBalancer.builder("greeter")
          .targets(targets)
          .strategy(Strategy.roundRobin())
          .build();
      OkHttpClient client = new OkHttpClient.Builder()
          .addInterceptor(LoadBalancingInterceptor.builder().service("greeter", greeter).build())
          .build();

      // 3. Call the logical host; every call goes straight to one backend, no proxy in between.
      List<Integer> servedBy = new ArrayList<>();
      try {
        for (int call = 1; call <= 10; call++) {
          Request request = new Request.Builder().url("http://greeter/hello").build();
          try (Response response = client.newCall(request).execute()) {
            int port = response.request().url().port();
            servedBy.add(port);
            out.printf("call %2d -> 127.0.0.1:%d  %s%n", call, port, response.body().string().trim());
          }
        }
      } finally {
        greeter.close();
        client.dispatcher().executorService().shutdown();
        client.connectionPool().evictAll();
      }
      return servedBy;
    } finally {
      for (HttpServer server : backends) {
        server.stop(0);
      }
    }
  }
}
