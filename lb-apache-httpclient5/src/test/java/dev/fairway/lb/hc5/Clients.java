package dev.fairway.lb.hc5;

import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.TargetStatus;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.apache.hc.client5.http.config.ConnectionConfig;
import org.apache.hc.client5.http.config.RequestConfig;
import org.apache.hc.client5.http.impl.classic.CloseableHttpClient;
import org.apache.hc.client5.http.impl.classic.HttpClientBuilder;
import org.apache.hc.client5.http.impl.classic.HttpClients;
import org.apache.hc.client5.http.impl.io.PoolingHttpClientConnectionManagerBuilder;
import org.apache.hc.core5.http.ClassicHttpRequest;
import org.apache.hc.core5.http.io.entity.EntityUtils;
import org.apache.hc.core5.util.Timeout;
import org.jspecify.annotations.Nullable;

/** HttpClient 5 classic clients for the tests, with bounded timeouts, closed together. */
final class Clients implements AutoCloseable {
  private final List<CloseableHttpClient> open = new ArrayList<>();

  /** A builder whose connections time out connecting after 1 s and reading after {@code responseTimeoutMillis}. */
  static HttpClientBuilder builder(long responseTimeoutMillis, int maxPerRoute, long leaseTimeoutMillis) {
    return HttpClients.custom()
        .setConnectionManager(PoolingHttpClientConnectionManagerBuilder.create()
            .setMaxConnPerRoute(maxPerRoute)
            .setMaxConnTotal(Math.max(20, maxPerRoute))
            .setDefaultConnectionConfig(ConnectionConfig.custom()
                .setConnectTimeout(Timeout.ofSeconds(1))
                .setSocketTimeout(Timeout.ofMilliseconds(responseTimeoutMillis))
                .build())
            .build())
        .setDefaultRequestConfig(RequestConfig.custom()
            .setResponseTimeout(Timeout.ofMilliseconds(responseTimeoutMillis))
            .setConnectionRequestTimeout(Timeout.ofMilliseconds(leaseTimeoutMillis))
            .build());
  }

  /** A client with Fairway when {@code fairway} is not null, else the plain client. */
  CloseableHttpClient client(@Nullable FairwayHttpClient5 fairway, long responseTimeoutMillis) {
    HttpClientBuilder builder = builder(responseTimeoutMillis, 5, 5_000);
    return add((fairway == null ? builder : fairway.customize(builder)).build());
  }

  CloseableHttpClient add(CloseableHttpClient client) {
    open.add(client);
    return client;
  }

  /** Executes {@code request}, reads the entity to its end, and returns the status. */
  static int code(CloseableHttpClient client, ClassicHttpRequest request) throws IOException {
    return client.execute(request, response -> {
      EntityUtils.consume(response.getEntity());
      return response.getCode();
    });
  }

  /** Executes {@code request} and returns its entity as a string, whatever the status. */
  static String body(CloseableHttpClient client, ClassicHttpRequest request) throws IOException {
    return client.execute(request, response -> EntityUtils.toString(response.getEntity()));
  }

  static int inFlight(LoadBalancer lb) {
    int total = 0;
    for (TargetStatus s : lb.status()) {
      total += s.inFlight();
    }
    return total;
  }

  @Override
  public void close() throws IOException {
    for (CloseableHttpClient client : open) {
      client.close();
    }
    open.clear();
  }
}
