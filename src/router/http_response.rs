//! `Rejection` into an `http::Response` (feature `http`): the status, the
//! `x-stargate-error-code` header and the JSON body of docs/stargate.md 5.5.
//!
//! Generic over the body type so any framework's body that can be built
//! from a `String` works (axum's `Body`, `http_body_util::Full<Bytes>`,
//! `String` itself).

use super::rejection::{Rejection, ERROR_CODE_HEADER};
use http::header::CONTENT_TYPE;
use http::{HeaderValue, Response, StatusCode};

impl Rejection {
    /// The response stargate sends: `status`, `x-stargate-error-code:
    /// <code>`, `content-type: application/json` and
    /// [`Rejection::body_json`] as the body.
    pub fn to_response<B: From<String>>(&self) -> Response<B> {
        let mut response = Response::new(B::from(self.body_json()));
        // Every code's status is 400, 404 or 503; 500 would only mean a
        // hand-built `Rejection` with an invalid status.
        *response.status_mut() =
            StatusCode::from_u16(self.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let headers = response.headers_mut();
        // The codes are static snake_case ASCII, valid header values.
        headers.insert(
            ERROR_CODE_HEADER,
            HeaderValue::from_static(self.header_value()),
        );
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        response
    }
}

impl<B: From<String>> From<Rejection> for Response<B> {
    fn from(rejection: Rejection) -> Self {
        rejection.to_response()
    }
}

impl<B: From<String>> From<&Rejection> for Response<B> {
    fn from(rejection: &Rejection) -> Self {
        rejection.to_response()
    }
}
