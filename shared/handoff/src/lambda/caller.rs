//! The caller AWS verified for a Function URL with `AuthType: AWS_IAM`.

use handoff_auth::IamCaller;
use lambda_http::request::RequestContext;
use lambda_http::{Request, RequestExt};

/// The caller AWS verified (SigV4) for a Function URL with `AuthType: AWS_IAM`.
pub(super) fn iam_caller(request: &Request) -> Option<IamCaller> {
    let RequestContext::ApiGatewayV2(context) = request.request_context_ref()? else {
        return None;
    };
    let iam = context.authorizer.as_ref()?.iam.as_ref()?;
    Some(IamCaller {
        account_id: iam.account_id.clone()?,
        caller_arn: iam.user_arn.clone()?,
        user_id: iam.user_id.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A Function URL invocation (payload 2.0) as AWS sends it for `AuthType: AWS_IAM`.
    fn function_url_event(authorizer: &str) -> String {
        format!(
            r#"{{"version":"2.0","routeKey":"$default","rawPath":"/agent","rawQueryString":"",
            "headers":{{"host":"abc.lambda-url.us-east-1.on.aws","content-type":"application/json"}},
            "requestContext":{{"accountId":"123456789012","apiId":"abc","domainName":"abc.lambda-url.us-east-1.on.aws",
              "domainPrefix":"abc","http":{{"method":"POST","path":"/agent","protocol":"HTTP/1.1",
              "sourceIp":"203.0.113.7","userAgent":"test"}},"requestId":"r-1","routeKey":"$default",
              "stage":"$default","time":"01/Dec/2026:10:00:00 +0000","timeEpoch":1795000000000{authorizer}}},
            "body":"{{}}","isBase64Encoded":false}}"#
        )
    }

    #[test]
    fn an_iam_function_url_call_names_its_caller() {
        let event = function_url_event(
            r#","authorizer":{"iam":{"accessKey":"AKIAEXAMPLE","accountId":"210987654321",
            "callerId":"AROAEXAMPLE:ci","cognitoIdentity":null,"principalOrgId":null,
            "userArn":"arn:aws:sts::210987654321:assumed-role/ci/session","userId":"AROAEXAMPLE:ci"}}"#,
        );
        let request = lambda_http::request::from_str(&event).expect("a Function URL event");
        let caller = iam_caller(&request).expect("the IAM caller");
        assert_eq!(caller.account_id, "210987654321");
        assert_eq!(
            caller.caller_arn,
            "arn:aws:sts::210987654321:assumed-role/ci/session"
        );
        assert_eq!(caller.user_id.as_deref(), Some("AROAEXAMPLE:ci"));
    }

    #[test]
    fn an_unsigned_function_url_call_has_no_caller() {
        let request = lambda_http::request::from_str(&function_url_event("")).unwrap();
        assert_eq!(iam_caller(&request), None);
    }
}
