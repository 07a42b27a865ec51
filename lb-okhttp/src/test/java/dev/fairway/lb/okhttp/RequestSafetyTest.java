package dev.fairway.lb.okhttp;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import okhttp3.MediaType;
import okhttp3.Request;
import okhttp3.RequestBody;
import okio.BufferedSink;
import org.junit.jupiter.api.Test;

/** How an OkHttp request is read for the shared retry rule: method, {@link Idempotency} tag, body. */
class RequestSafetyTest {
  private static final MediaType TEXT = MediaType.get("text/plain");

  @Test
  void idempotencyAndResendability_followMethodTagAndBody() {
    RequestBody body = RequestBody.create("x", TEXT);
    RequestBody oneShot = new RequestBody() {
      @Override
      public MediaType contentType() {
        return TEXT;
      }

      @Override
      public void writeTo(BufferedSink sink) throws IOException {
        sink.writeUtf8("x");
      }

      @Override
      public boolean isOneShot() {
        return true;
      }
    };

    assertThat(RequestSafety.isResendable(request("GET", null))).isTrue();
    assertThat(RequestSafety.isResendable(request("PUT", body))).isTrue();
    assertThat(RequestSafety.isResendable(request("DELETE", null))).isTrue();
    assertThat(RequestSafety.isResendable(request("POST", body))).isFalse();
    assertThat(RequestSafety.isResendable(request("PATCH", body))).isFalse();
    assertThat(RequestSafety.isResendable(request("PUT", oneShot))).isFalse();
    assertThat(RequestSafety.isResendable(request("POST", body).newBuilder()
        .tag(Idempotency.class, Idempotency.IDEMPOTENT).build())).isTrue();
    assertThat(RequestSafety.isResendable(request("GET", null).newBuilder()
        .tag(Idempotency.class, Idempotency.NON_IDEMPOTENT).build())).isFalse();
  }

  private static Request request(String method, RequestBody body) {
    return new Request.Builder().url("http://orders/x").method(method, body).build();
  }

  @Test
  void isHedgeable_getHeadOptionsOrTaggedIdempotent_neverPostPutOrNonIdempotent() {
    MediaType text = MediaType.get("text/plain");
    Request.Builder base = new Request.Builder().url("http://orders/x");
    assertThat(RequestSafety.isHedgeable(base.build())).isTrue();
    assertThat(RequestSafety.isHedgeable(base.head().build())).isTrue();
    assertThat(RequestSafety.isHedgeable(base.method("OPTIONS", null).build())).isTrue();
    assertThat(RequestSafety.isHedgeable(base.post(RequestBody.create("a", text)).build())).isFalse();
    assertThat(RequestSafety.isHedgeable(base.put(RequestBody.create("a", text)).build())).isFalse();
    assertThat(RequestSafety.isHedgeable(base.delete().build())).isFalse();
    assertThat(RequestSafety.isHedgeable(new Request.Builder().url("http://orders/x")
        .tag(Idempotency.class, Idempotency.NON_IDEMPOTENT).build())).isFalse();
    assertThat(RequestSafety.isHedgeable(new Request.Builder().url("http://orders/x").post(RequestBody.create("a", text))
        .tag(Idempotency.class, Idempotency.IDEMPOTENT).build())).isTrue();
  }
}
