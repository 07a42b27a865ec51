package dev.fairway.samples.lab;

import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.Pick;
import dev.fairway.lb.Target;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.IOException;
import java.util.HashSet;
import java.util.Set;
import okhttp3.HttpUrl;
import okhttp3.Interceptor;
import okhttp3.Request;
import okhttp3.Response;
import okhttp3.ResponseBody;

/**
 * TEMPORARY stand-in for lb-okhttp's LoadBalancingInterceptor while it is being written, so the lab
 * can be developed; removed as soon as the real interceptor is merged.
 */
final class InterimInterceptor implements Interceptor {
  private final String host;
  private final LoadBalancer lb;
  private final String keyHeader;
  private final int maxAttempts;
  private final MeterRegistry registry;

  InterimInterceptor(String host, LoadBalancer lb, String keyHeader, int maxAttempts, MeterRegistry registry) {
    this.host = host;
    this.lb = lb;
    this.keyHeader = keyHeader;
    this.maxAttempts = maxAttempts;
    this.registry = registry;
  }

  @Override
  public Response intercept(Chain chain) throws IOException {
    Request request = chain.request();
    if (!request.url().host().equals(host)) {
      return chain.proceed(request);
    }
    String key = keyHeader == null ? null : request.header(keyHeader);
    Set<Target> tried = new HashSet<>();
    IOException last = null;
    for (int attempt = 0; attempt < maxAttempts; attempt++) {
      if (attempt > 0) {
        registry.counter("fairway.retries", "service", host, "reason", "io").increment();
      }
      Pick pick = lb.pick(key, tried);
      tried.add(pick.target());
      HttpUrl url = request.url().newBuilder().host(pick.target().host()).port(pick.target().port()).build();
      try {
        Response r = chain.proceed(request.newBuilder().url(url).build());
        ResponseBody body = r.body();
        byte[] bytes = body.bytes();
        if (r.code() >= 500) {
          pick.failure(new IOException("HTTP " + r.code()));
        } else {
          pick.success();
        }
        return r.newBuilder().body(ResponseBody.create(bytes, body.contentType())).build();
      } catch (IOException e) {
        pick.failure(e);
        last = e;
      } catch (RuntimeException e) {
        pick.release();
        throw e;
      }
    }
    throw last;
  }
}
